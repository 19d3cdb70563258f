/**
 * Health probe of a distributed service's RPC (docker-compose.yml healthchecks, deploy/k8s probes): sends the
 * service's `<service>.ping` over mutual TLS with the service's own certificate — the one caller besides its peers
 * that `rpcServices` admits, and only for its ping — and exits 0 on `{"status":"ok"}`, 1 otherwise (within 4 s).
 * Plain JavaScript, no TypeScript loader: a probe runs every few seconds. It reads the settings the service reads:
 * `<SERVICE>_RPC_URL` (a 0.0.0.0 or :: host is reached on loopback) and RPC_CREDENTIALS_DIR or RPC_TLS_*_FILE.
 *
 *   node scripts/rpc-ping.cjs identity
 */
const fs = require('node:fs');
const path = require('node:path');
const tls = require('node:tls');

const service = process.argv[2];
const fail = (why) => {
  process.stderr.write(`rpc-ping ${service ?? ''}: ${why}\n`);
  process.exit(1);
};
if (!service || !/^[a-z-]+$/.test(service)) fail('usage: node scripts/rpc-ping.cjs <service>');
const env = process.env;
const url = new URL(env[`${service.toUpperCase().replace(/-/g, '_')}_RPC_URL`] ?? '');
const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
const file = (explicit, name) =>
  explicit || (env.RPC_CREDENTIALS_DIR ? path.join(env.RPC_CREDENTIALS_DIR, name) : fail('no RPC credentials set'));
const socket = tls.connect(
  {
    host: host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host,
    port: Number(url.port),
    ca: fs.readFileSync(file(env.RPC_TLS_CA_FILE, 'ca.crt')),
    cert: fs.readFileSync(file(env.RPC_TLS_CERT_FILE, `${service}.crt`)),
    key: fs.readFileSync(file(env.RPC_TLS_KEY_FILE, `${service}.key`)),
    minVersion: 'TLSv1.3',
    checkServerIdentity: (_host, certificate) =>
      certificate.subject.CN === service ? undefined : new Error(`the server is ${certificate.subject.CN}`),
  },
  () => {
    const message = JSON.stringify({ pattern: `${service}.ping`, data: { $context: {}, payload: {} }, id: 'probe' });
    socket.write(`${message.length}#${message}`);
  },
);
let received = '';
socket.setTimeout(4000, () => fail('no answer within 4 s'));
socket.on('error', (error) => fail(error.message));
socket.on('data', (chunk) => {
  received += chunk;
  if (received.includes('"status":"ok"')) process.exit(0);
  if (received.includes('"ok":false')) fail(received);
});
