/**
 * A Redis and a Kafka broker of the fault suite's own, on free loopback ports, that it may stop and start again at
 * will: the shared ones (6379, 9092) serve other suites running at the same time and are never touched.
 *
 * - Redis: `redis-server --port <p> --bind 127.0.0.1 --save '' --appendonly no` (no persistence: a restart is empty).
 * - Kafka: `scripts/kafka.sh` with KAFKA_HOME in a temporary folder and its own ports; its jars are the checkout's
 *   (`.kafka/libs`, linked) when already fetched, else fetched by the script. Data survives a stop and start.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort, repoRoot, type Availability } from '@switchyard/testing';

const onPath = (command: string): boolean =>
  (process.env.PATH ?? '').split(path.delimiter).some((dir) => {
    try {
      fs.accessSync(path.join(dir, command), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });

/** What the suite needs to run a Redis and a Kafka broker of its own. */
export function ownInfraAvailability(): Availability {
  if (!onPath('redis-server'))
    return { available: false, reason: 'redis-server is not on PATH (apt-get install redis-server)' };
  if (!onPath('java')) return { available: false, reason: 'java is not on PATH: scripts/kafka.sh needs it' };
  const jars = fs.existsSync(path.join(repoRoot, '.kafka/libs/.pom.sha256'));
  if (!jars && !onPath('mvn'))
    return {
      available: false,
      reason: 'neither .kafka/libs (bash scripts/kafka.sh start) nor mvn to fetch the broker jars',
    };
  return { available: true };
}

/** One RESP command to a Redis at `port`; resolves with the raw reply line. */
export function redisCommand(port: number, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let reply = '';
    socket.setTimeout(1_000, () => socket.destroy(new Error('redis: no answer in 1 s')));
    socket.on('connect', () =>
      socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`),
    );
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) {
        socket.end();
        resolve(reply.split('\r\n')[0]!);
      }
    });
    socket.on('error', reject);
  });
}

async function until(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what} not reached within ${timeoutMs} ms`);
}

export class OwnRedis {
  private child: ChildProcess | null = null;
  private output = '';

  private constructor(readonly port: number) {}

  static async start(): Promise<OwnRedis> {
    const redis = new OwnRedis(await freePort());
    await redis.start();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts it (again, on the same port) and resolves once it answers PING. */
  async start(): Promise<void> {
    if (this.child) return;
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout?.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.child = child;
    await until(
      `redis-server on ${this.port} answering PING (output: ${this.output.slice(-500)})`,
      async () => (await redisCommand(this.port, 'PING')) === '+PONG',
      10_000,
    );
  }

  /** Stops it (SIGTERM) and resolves once the process is gone. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = null;
    if (child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  }
}

export class OwnKafka {
  private constructor(
    readonly home: string,
    readonly port: number,
    private readonly controllerPort: number,
  ) {}

  static async create(): Promise<OwnKafka> {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-faults-kafka-'));
    const shared = path.join(repoRoot, '.kafka/libs');
    if (fs.existsSync(path.join(shared, '.pom.sha256'))) fs.symlinkSync(shared, path.join(home, 'libs'));
    return new OwnKafka(home, await freePort(), await freePort());
  }

  get brokers(): string {
    return `127.0.0.1:${this.port}`;
  }

  private script(command: 'start' | 'stop'): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        'bash',
        [path.join(repoRoot, 'scripts/kafka.sh'), command],
        {
          cwd: repoRoot,
          env: {
            ...process.env,
            KAFKA_HOME: this.home,
            KAFKA_PORT: String(this.port),
            KAFKA_CONTROLLER_PORT: String(this.controllerPort),
          },
        },
        (error, stdout, stderr) =>
          error
            ? reject(new Error(`kafka.sh ${command} failed: ${error.message}\n${stdout}\n${stderr}`))
            : resolve(stdout),
      );
    });
  }

  /** Starts the broker (formatting its storage the first time) and resolves once a kafkajs client gets answers. */
  start(): Promise<string> {
    return this.script('start');
  }

  /** Stops the broker (SIGTERM, controlled shutdown) and resolves once the JVM is gone. */
  stop(): Promise<string> {
    return this.script('stop');
  }

  /** Stops it and removes its folder (logs and data). */
  async destroy(): Promise<void> {
    await this.stop().catch(() => undefined);
    fs.rmSync(this.home, { recursive: true, force: true });
  }
}
