#!/usr/bin/env bash
# A single-node Kafka 3.9 broker (KRaft, combined broker + controller) for development and tests, run from the
# jars that deploy/kafka/pom.xml fetches from Maven Central. No tarball, no Docker. Loopback only.
#
#   bash scripts/kafka.sh start    fetch jars if needed, format storage once, start, wait until ready
#   bash scripts/kafka.sh stop     stop it and wait until the process is gone
#   bash scripts/kafka.sh status   exit 0 when running, 3 when not
#
# Environment: KAFKA_PORT (9092), KAFKA_CONTROLLER_PORT (9093), KAFKA_HOME (<repo>/.kafka, git-ignored),
# KAFKA_READY_TIMEOUT seconds (90), KAFKA_HEAP_OPTS (-Xms256m -Xmx512m).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPLOY="$ROOT/deploy/kafka"
KAFKA_HOME="${KAFKA_HOME:-$ROOT/.kafka}"
LIBS="$KAFKA_HOME/libs"
DATA="$KAFKA_HOME/data"
LOGS="$KAFKA_HOME/logs"
CONFIG="$KAFKA_HOME/server.properties"
PID_FILE="$KAFKA_HOME/kafka.pid"
CLUSTER_ID_FILE="$KAFKA_HOME/cluster-id"
KAFKA_PORT="${KAFKA_PORT:-9092}"
KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-9093}"
READY_TIMEOUT="${KAFKA_READY_TIMEOUT:-90}"
HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"
# The JVM flags of Kafka's own kafka-run-class.sh, minus GC logging.
JVM_OPTS="-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 \
-XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true"

say() { printf 'kafka: %s\n' "$*"; }
fail() { printf 'kafka: %s\n' "$*" >&2; exit 1; }

running_pid() {
  [[ -f "$PID_FILE" ]] || return 1
  local pid
  pid="$(cat "$PID_FILE")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  # The pid must still be our broker, not a recycled pid.
  { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -q 'kafka\.Kafka' || return 1
  printf '%s' "$pid"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

fetch_jars() {
  local stamp="$LIBS/.pom.sha256" want
  want="$(sha256sum "$DEPLOY/pom.xml" | cut -d' ' -f1)"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then return 0; fi
  command -v mvn >/dev/null || fail "mvn not found: the broker jars come from Maven Central through mvn"
  say "fetching broker jars from Maven Central into $LIBS"
  local started=$SECONDS tmp="$KAFKA_HOME/libs.tmp"
  rm -rf "$tmp"
  if ! mvn -q -B -Dstyle.color=never -f "$DEPLOY/pom.xml" dependency:copy-dependencies -DoutputDirectory="$tmp" \
    >"$KAFKA_HOME/mvn.log" 2>&1; then
    cat "$KAFKA_HOME/mvn.log" >&2
    fail "mvn dependency:copy-dependencies failed (output above, also in $KAFKA_HOME/mvn.log)"
  fi
  rm -rf "$LIBS"
  mv "$tmp" "$LIBS"
  printf '%s' "$want" >"$stamp"
  say "fetched $(find "$LIBS" -name '*.jar' | wc -l) jars in $((SECONDS - started)) s"
}

write_config() {
  sed -e "s|@KAFKA_PORT@|$KAFKA_PORT|g" \
      -e "s|@KAFKA_CONTROLLER_PORT@|$KAFKA_CONTROLLER_PORT|g" \
      -e "s|@KAFKA_DATA_DIR@|$DATA|g" \
      "$DEPLOY/server.properties" >"$CONFIG"
}

format_storage() {
  [[ -f "$DATA/meta.properties" ]] && return 0
  if [[ ! -s "$CLUSTER_ID_FILE" ]]; then
    java -cp "$LIBS/*" -Dlog4j.configuration="file:$DEPLOY/log4j.properties" -Dkafka.logs.dir="$LOGS" \
      kafka.tools.StorageTool random-uuid | tail -n 1 >"$CLUSTER_ID_FILE"
  fi
  say "formatting $DATA (cluster id $(cat "$CLUSTER_ID_FILE"))"
  java -cp "$LIBS/*" -Dlog4j.configuration="file:$DEPLOY/log4j.properties" -Dkafka.logs.dir="$LOGS" \
    kafka.tools.StorageTool format --ignore-formatted -t "$(cat "$CLUSTER_ID_FILE")" -c "$CONFIG" >/dev/null
}

# Answers when a real client can talk to the broker and its group coordinator: kafkajs admin listTopics and
# describeGroups (the client the services use).
# Without node_modules, the broker's own "Kafka Server started" line plus an open port is taken as ready.
broker_answers() {
  (cd "$ROOT" && node -e '
    let kafkajs;
    try { kafkajs = require("kafkajs"); } catch { process.exit(2); }
    const { Kafka, logLevel } = kafkajs;
    const kafka = new Kafka({ clientId: "kafka-sh-probe", brokers: [process.argv[1]], logLevel: logLevel.NOTHING,
      connectionTimeout: 1000, requestTimeout: 3000, retry: { retries: 0 } });
    const admin = kafka.admin();
    // describeGroups needs the group coordinator: on a fresh broker that waits for __consumer_offsets, which
    // would otherwise fail the first consumer groups with COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR.
    admin.connect().then(() => admin.listTopics()).then(() => admin.describeGroups(["kafka-sh-probe"]))
      .then(() => admin.disconnect())
      .then(() => process.exit(0), () => process.exit(1));
  ' "127.0.0.1:$KAFKA_PORT") >/dev/null 2>&1
  local rc=$?
  [[ $rc -eq 0 ]] && return 0
  [[ $rc -eq 2 || $rc -eq 127 ]] && grep -q 'Kafka Server started' "$LOGS/server.log" 2>/dev/null && return 0
  return 1
}

print_log_tail() {
  printf -- '--- first errors in %s\n' "$LOGS/server.log" >&2
  grep -m 5 -E '^\[[^]]+\] (ERROR|FATAL)' "$LOGS/server.log" >&2 2>/dev/null || true
  printf -- '--- %s (last 40 lines)\n' "$LOGS/server.log" >&2
  tail -n 40 "$LOGS/server.log" >&2 2>/dev/null || true
  printf -- '--- %s\n' "$LOGS/kafka.out" >&2
  tail -n 20 "$LOGS/kafka.out" >&2 2>/dev/null || true
}

start() {
  local pid
  if pid="$(running_pid)"; then
    say "already running (pid $pid) on 127.0.0.1:$KAFKA_PORT"
    return 0
  fi
  rm -f "$PID_FILE"
  command -v java >/dev/null || fail "java not found (Kafka 3.9 runs on Java 11 or 17)"
  if port_open "$KAFKA_PORT"; then
    # Another checkout's broker (or one started by hand): the tests only need a broker there.
    if broker_answers; then
      say "a Kafka broker not started from this checkout already answers on 127.0.0.1:$KAFKA_PORT; using it"
      return 0
    fi
    fail "127.0.0.1:$KAFKA_PORT is taken by a process that does not answer as a Kafka broker"
  fi
  mkdir -p "$KAFKA_HOME" "$DATA" "$LOGS"
  fetch_jars
  write_config
  format_storage

  local started=$SECONDS
  # setsid: the broker outlives the shell that started it; exec: the pid written is the JVM's own.
  # shellcheck disable=SC2086
  setsid bash -c 'echo $$ >"$0"; exec "$@"' "$PID_FILE" \
    java $HEAP_OPTS $JVM_OPTS \
      -Dlog4j.configuration="file:$DEPLOY/log4j.properties" -Dkafka.logs.dir="$LOGS" \
      -cp "$LIBS/*" kafka.Kafka "$CONFIG" \
    >"$LOGS/kafka.out" 2>&1 </dev/null &
  disown || true

  while (( SECONDS - started < READY_TIMEOUT )); do
    sleep 0.5
    if ! pid="$(running_pid)"; then
      # The pid file is written by the child; give it a moment before declaring the JVM dead.
      if (( SECONDS - started >= 3 )); then
        rm -f "$PID_FILE"
        print_log_tail
        fail "the broker exited during startup"
      fi
      continue
    fi
    if port_open "$KAFKA_PORT" && broker_answers; then
      say "ready on 127.0.0.1:$KAFKA_PORT (pid $pid) after $((SECONDS - started)) s; logs in $LOGS"
      return 0
    fi
  done
  print_log_tail
  fail "not ready after ${READY_TIMEOUT} s (the broker is left running as pid ${pid:-?}; 'stop' ends it)"
}

stop() {
  local pid
  if ! pid="$(running_pid)"; then
    rm -f "$PID_FILE"
    say "not running"
    return 0
  fi
  kill -TERM "$pid"
  local waited=0
  while kill -0 "$pid" 2>/dev/null; do
    if (( waited >= 60 )); then   # 30 s of controlled shutdown, then give up on it
      say "still running after 30 s, sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
    sleep 0.5
    waited=$((waited + 1))
  done
  rm -f "$PID_FILE"
  say "stopped (pid $pid)"
}

status() {
  local pid
  if pid="$(running_pid)"; then
    say "running (pid $pid) on 127.0.0.1:$KAFKA_PORT; logs in $LOGS"
    return 0
  fi
  say "not running"
  return 3
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  restart) stop; start ;;
  *) printf 'usage: %s start|stop|status|restart\n' "$0" >&2; exit 2 ;;
esac
