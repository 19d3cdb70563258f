/**
 * Sends fuzz requests: structured ones on keep-alive connections (node:http, so that paths, methods and header
 * values go out exactly as generated: fetch would normalise them), raw ones as bytes on a fresh socket.
 */
import http from 'node:http';
import net from 'node:net';
import type { FuzzRequest } from './hostile-requests';

export interface FuzzAnswer {
  /** 0: no answer (the connection closed or failed without a response). */
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
  /** Why there was no answer. */
  readonly error?: string;
  /** Sent as raw bytes (a raw case, or a HEAD request over Node's header size limit: see `send`). */
  readonly raw?: boolean;
}

/** Node's default limit on a request's head (request line and headers): larger heads are refused unparsed. */
const MAX_HEAD_BYTES = 16 * 1024;

const TIMEOUT_MS = 30_000;

export class FuzzSender {
  private readonly agent: http.Agent;

  constructor(
    private readonly host: string,
    private readonly port: number,
    maxSockets: number,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  }

  send(request: FuzzRequest): Promise<FuzzAnswer> {
    if (request.kind === 'raw') return this.sendRaw(request.raw!);
    // The server answers a head it cannot parse with an error body, not knowing the method; the Node client, knowing
    // it sent HEAD, then fails on the body. Such a request goes out as bytes, and its answer is read as bytes.
    if (request.method === 'HEAD' && headBytes(request) > MAX_HEAD_BYTES) return this.sendRaw(serialize(request));
    return this.sendHttp(request);
  }

  close(): void {
    this.agent.destroy();
  }

  private sendHttp(request: FuzzRequest): Promise<FuzzAnswer> {
    return new Promise((resolve) => {
      let settled = false;
      const done = (answer: FuzzAnswer) => {
        if (!settled) {
          settled = true;
          resolve(answer);
        }
      };
      const headers: Record<string, string | number> = { ...request.headers };
      if (request.body && !request.chunked) headers['content-length'] = request.body.length;
      let req: http.ClientRequest;
      try {
        req = http.request({
          host: this.host,
          port: this.port,
          method: request.method,
          path: request.target,
          headers,
          // A body the server may refuse before reading it (413) goes on its own connection.
          agent: request.expectStatus === 413 ? false : this.agent,
          timeout: TIMEOUT_MS,
        });
      } catch (error) {
        // The Node client refused to send it (e.g. an invalid path character): a generator bug, not a server answer.
        done({ status: -1, headers: {}, text: '', error: `client refused: ${(error as Error).message}` });
        return;
      }
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          done({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', (error) =>
          done({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
            error: error.message,
          }),
        );
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (error: NodeJS.ErrnoException) =>
        done({ status: 0, headers: {}, text: '', error: error.code ?? error.message }),
      );
      if (request.body && request.chunked) {
        const size = 64 * 1024;
        for (let offset = 0; offset < request.body.length; offset += size)
          req.write(request.body.subarray(offset, offset + size));
        req.end();
      } else {
        req.end(request.body);
      }
    });
  }

  private sendRaw(bytes: Buffer): Promise<FuzzAnswer> {
    return new Promise((resolve) => {
      const socket = net.connect(this.port, this.host);
      const chunks: Buffer[] = [];
      let settled = false;
      const finish = (error?: string) => {
        if (settled) return;
        settled = true;
        socket.destroy();
        resolve(parseRawResponse(Buffer.concat(chunks), error));
      };
      socket.setTimeout(TIMEOUT_MS, () => finish('timeout'));
      socket.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        // One response is all a raw case needs; a kept-alive connection would otherwise wait for the timeout.
        if (completeResponse(Buffer.concat(chunks))) finish();
      });
      socket.on('end', () => finish());
      socket.on('close', () => finish());
      socket.on('error', (error: NodeJS.ErrnoException) => finish(error.code ?? error.message));
      socket.write(bytes);
    });
  }
}

function headBytes(request: FuzzRequest): number {
  return (
    request.method.length +
    request.target.length +
    Object.entries(request.headers).reduce(
      (sum, [name, value]) => sum + name.length + Buffer.byteLength(value, 'latin1') + 4,
      0,
    ) +
    64
  );
}

function serialize(request: FuzzRequest): Buffer {
  const headers = Object.entries(request.headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const length = request.body ? `content-length: ${request.body.length}\r\n` : '';
  const head = Buffer.from(
    `${request.method} ${request.target} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n${headers}${length}\r\n`,
    'latin1',
  );
  return request.body ? Buffer.concat([head, request.body]) : head;
}

function splitHead(buffer: Buffer): { head: string; body: Buffer } | null {
  const end = buffer.indexOf('\r\n\r\n');
  if (end < 0) return null;
  return { head: buffer.subarray(0, end).toString('latin1'), body: buffer.subarray(end + 4) };
}

function headerOf(head: string, name: string): string | undefined {
  const line = head.split('\r\n').find((l) => l.toLowerCase().startsWith(`${name}:`));
  return line?.slice(name.length + 1).trim();
}

function completeResponse(buffer: Buffer): boolean {
  const parts = splitHead(buffer);
  if (!parts) return false;
  const length = headerOf(parts.head, 'content-length');
  if (length !== undefined) return parts.body.length >= Number(length);
  if (headerOf(parts.head, 'transfer-encoding')?.toLowerCase() === 'chunked') return parts.body.includes('0\r\n\r\n');
  return false;
}

function parseRawResponse(buffer: Buffer, error?: string): FuzzAnswer {
  const parts = splitHead(buffer);
  if (!parts) return { status: 0, headers: {}, text: buffer.toString('latin1'), error: error ?? 'no response' };
  const [statusLine = '', ...lines] = parts.head.split('\r\n');
  const status = Number(/^HTTP\/\d\.\d (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = parts.body;
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') body = dechunk(body);
  else if (headers['content-length'] !== undefined) body = body.subarray(0, Number(headers['content-length']));
  return {
    status,
    headers,
    text: body.toString('utf8'),
    raw: true,
    ...(status === 0 ? { error: error ?? 'unparseable response' } : {}),
  };
}

function dechunk(body: Buffer): Buffer {
  const out: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = body.indexOf('\r\n', offset);
    if (lineEnd < 0) break;
    const size = parseInt(body.subarray(offset, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    out.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(out);
}
