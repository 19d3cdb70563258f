/**
 * Mutual TLS credentials of the distributed runtime's RPC: one certificate authority per installation, and per service
 * (`rpcServices`) a certificate naming it (subject CN = the service) with its private key. A server admits a caller by
 * the CN of a certificate its CA signed; a client accepts a server only when its certificate names the service it
 * meant to call. Made by `npm run cli -- rpc-credentials create --out DIR` (docs/operations.md).
 */
import { createPrivateKey, KeyObject, webcrypto, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type * as X509 from '@peculiar/x509';
import { rpcServiceNames } from './rpc-services';

/**
 * @peculiar/x509 (213 modules), loaded by the first credential set made: only the CLI and tests make one, so a
 * service process never loads it. It resolves its algorithms through tsyringe, which needs the Reflect metadata
 * polyfill loaded first.
 */
function x509Library(): typeof X509 {
  require('reflect-metadata');
  return require('@peculiar/x509') as typeof X509;
}

/** What one process needs: its service name, the CA certificates it trusts (PEM, one or several), its own pair. */
export interface RpcCredentials {
  readonly service: string;
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

export interface RpcCredentialSet {
  readonly ca: { readonly cert: string; readonly key: string };
  /** Service name → its certificate and key (PEM). */
  readonly services: Readonly<Record<string, { readonly cert: string; readonly key: string }>>;
}

/** The files of a credential set in its directory. The CA's key is only for issuing: never give it to a service. */
export const rpcCredentialFiles = {
  caCert: 'ca.crt',
  caKey: 'ca.key',
  cert: (service: string) => `${service}.crt`,
  key: (service: string) => `${service}.key`,
} as const;

const subtle = webcrypto.subtle;
/**
 * Node's keys as the types @peculiar/x509 is declared with: the same objects, but a program that also loads the DOM's
 * types (the browser packages' specs import the test kit) sees two declarations of `CryptoKey`.
 */
type X509KeyPair = Parameters<typeof X509.X509CertificateGenerator.createSelfSigned>[0]['keys'];
type X509SigningKey = X509KeyPair['privateKey'];
const x509Crypto = webcrypto as unknown as NonNullable<Parameters<typeof X509.SubjectKeyIdentifierExtension.create>[2]>;
const generateKeyPair = async (): Promise<X509KeyPair> =>
  (await subtle.generateKey(ecdsa, true, ['sign', 'verify'])) as unknown as X509KeyPair;
const ecdsa = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
/** Certificates start a little in the past: a peer whose clock is behind still accepts a fresh one. */
const CLOCK_SKEW_MS = 5 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

const pemOfKey = (key: X509KeyPair['privateKey']): string =>
  KeyObject.from(key as unknown as webcrypto.CryptoKey)
    .export({ type: 'pkcs8', format: 'pem' })
    .toString();

async function importSigningKey(pem: string): Promise<X509SigningKey> {
  const der = createPrivateKey(pem).export({ type: 'pkcs8', format: 'der' });
  return (await subtle.importKey('pkcs8', der, ecdsa, false, ['sign'])) as unknown as X509SigningKey;
}

export interface RpcCredentialSetOptions {
  /** How long the certificates are valid (365 days). */
  readonly days?: number;
  /** Issue under this CA (a running installation's) instead of a new one. */
  readonly ca?: RpcCredentialSet['ca'];
  /** The services to issue certificates for (every service of `rpcServices`). */
  readonly services?: readonly string[];
  /** When the validity starts (now). */
  readonly now?: Date;
}

/**
 * A CA (new, or `ca` when given: certificates for a running installation) and a certificate for each service, valid
 * for `days`. ECDSA P-256 keys: the cheapest TLS handshake that every TLS 1.3 peer speaks.
 */
export async function createRpcCredentialSet(options: RpcCredentialSetOptions = {}): Promise<RpcCredentialSet> {
  const x509 = x509Library();
  const days = options.days ?? 365;
  const now = (options.now ?? new Date()).getTime();
  const notBefore = new Date(now - CLOCK_SKEW_MS);
  const notAfter = new Date(now + days * DAY_MS);
  let ca = options.ca;
  if (!ca) {
    const keys = await generateKeyPair();
    const cert = await x509.X509CertificateGenerator.createSelfSigned(
      {
        name: `CN=Switchyard RPC CA ${new Date(now).toISOString()}`,
        keys,
        notBefore,
        notAfter,
        signingAlgorithm: ecdsa,
        extensions: [
          new x509.BasicConstraintsExtension(true, 0, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
          await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, x509Crypto),
        ],
      },
      x509Crypto,
    );
    ca = { cert: cert.toString('pem'), key: pemOfKey(keys.privateKey) };
  }
  const caCert = new x509.X509Certificate(ca.cert);
  const caKey = await importSigningKey(ca.key);
  const services: Record<string, { cert: string; key: string }> = {};
  for (const service of options.services ?? rpcServiceNames) {
    const keys = await generateKeyPair();
    const cert = await x509.X509CertificateGenerator.create(
      {
        subject: `CN=${service}`,
        issuer: caCert.subject,
        publicKey: keys.publicKey,
        signingKey: caKey,
        notBefore,
        notAfter,
        signingAlgorithm: ecdsa,
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
          // Each service is a server to its callers and a client of the services it calls.
          new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
          new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: service }]),
          await x509.AuthorityKeyIdentifierExtension.create(caCert, false, x509Crypto),
          await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, x509Crypto),
        ],
      },
      x509Crypto,
    );
    services[service] = { cert: cert.toString('pem'), key: pemOfKey(keys.privateKey) };
  }
  return { ca, services };
}

/** Writes a set into `dir` (created 0700; every file 0600). Refuses a directory that already holds any of its files. */
export function writeRpcCredentialSet(dir: string, set: RpcCredentialSet): string[] {
  const files: [string, string][] = [
    [rpcCredentialFiles.caCert, set.ca.cert],
    [rpcCredentialFiles.caKey, set.ca.key],
    ...Object.entries(set.services).flatMap(([service, { cert, key }]): [string, string][] => [
      [rpcCredentialFiles.cert(service), cert],
      [rpcCredentialFiles.key(service), key],
    ]),
  ];
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  // mkdir's mode does not apply to a directory that existed: make it private either way.
  fs.chmodSync(dir, 0o700);
  const existing = files.map(([name]) => name).filter((name) => fs.existsSync(path.join(dir, name)));
  if (existing.length > 0) throw new Error(`${dir} already holds ${existing.join(', ')}: choose an empty directory`);
  // `wx`: never follow or replace a file that appeared meanwhile; the mode applies at creation.
  for (const [name, content] of files) fs.writeFileSync(path.join(dir, name), content, { mode: 0o600, flag: 'wx' });
  return files.map(([name]) => path.join(dir, name));
}

/** The CA of a set written before (`--ca-from`), to issue new service certificates under it. */
export function readRpcCertificateAuthority(dir: string): RpcCredentialSet['ca'] {
  return {
    cert: readCredentialFile(path.join(dir, rpcCredentialFiles.caCert)),
    key: readCredentialFile(path.join(dir, rpcCredentialFiles.caKey)),
  };
}

/** The settings that point a process at its credentials (libs/config). */
export interface RpcCredentialSettings {
  readonly RPC_CREDENTIALS_DIR?: string | undefined;
  readonly RPC_TLS_CA_FILE?: string | undefined;
  readonly RPC_TLS_CERT_FILE?: string | undefined;
  readonly RPC_TLS_KEY_FILE?: string | undefined;
}

/**
 * The credentials of `service` from its settings: each of RPC_TLS_CA_FILE, RPC_TLS_CERT_FILE and RPC_TLS_KEY_FILE, or
 * else the file of RPC_CREDENTIALS_DIR for it. Throws a message naming what is missing or wrong (the process stops):
 * no credentials, an unreadable file, a certificate of another service, one expired or not signed by the CA, a key
 * that does not match.
 */
export function loadRpcCredentials(service: string, settings: RpcCredentialSettings, now = new Date()): RpcCredentials {
  const dir = settings.RPC_CREDENTIALS_DIR;
  const fileOf = (explicit: string | undefined, name: string): string | undefined =>
    explicit ?? (dir === undefined ? undefined : path.join(dir, name));
  const files = {
    ca: fileOf(settings.RPC_TLS_CA_FILE, rpcCredentialFiles.caCert),
    cert: fileOf(settings.RPC_TLS_CERT_FILE, rpcCredentialFiles.cert(service)),
    key: fileOf(settings.RPC_TLS_KEY_FILE, rpcCredentialFiles.key(service)),
  };
  if (files.ca === undefined || files.cert === undefined || files.key === undefined) {
    throw new Error(
      `the ${service} service needs its RPC credentials (mutual TLS between services): set RPC_CREDENTIALS_DIR ` +
        'to a directory made by `npm run cli -- rpc-credentials create --out DIR`, or RPC_TLS_CA_FILE, ' +
        'RPC_TLS_CERT_FILE and RPC_TLS_KEY_FILE (docs/operations.md, "Credentials between services")',
    );
  }
  const found = { ca: files.ca, cert: files.cert, key: files.key };
  const credentials = {
    service,
    ca: readCredentialFile(found.ca),
    cert: readCredentialFile(found.cert),
    key: readCredentialFile(found.key),
  };
  checkRpcCredentials(credentials, now, found);
  return credentials;
}

/** The checks of `loadRpcCredentials`, on credentials already in memory. */
export function checkRpcCredentials(
  credentials: RpcCredentials,
  now = new Date(),
  files?: { ca: string; cert: string; key: string },
): void {
  const where = (which: 'ca' | 'cert' | 'key') => (files ? ` (${files[which]})` : '');
  const problem = (message: string) => new Error(`RPC credentials of ${credentials.service}: ${message}`);
  let cert: X509Certificate;
  let authorities: X509Certificate[];
  try {
    cert = new X509Certificate(credentials.cert);
  } catch {
    throw problem(`the certificate${where('cert')} is not a PEM certificate`);
  }
  try {
    authorities = pemBlocks(credentials.ca).map((block) => new X509Certificate(block));
  } catch {
    throw problem(`the CA file${where('ca')} is not PEM certificates`);
  }
  if (authorities.length === 0) throw problem(`the CA file${where('ca')} holds no certificate`);
  const named = commonNameOf(cert.subject);
  if (named !== credentials.service)
    throw problem(`the certificate${where('cert')} names ${named ?? 'no service'}, not ${credentials.service}`);
  if (Date.parse(cert.validTo) <= now.getTime())
    throw problem(`the certificate${where('cert')} expired on ${cert.validTo}: make new ones`);
  if (Date.parse(cert.validFrom) > now.getTime())
    throw problem(`the certificate${where('cert')} is valid only from ${cert.validFrom}`);
  if (!authorities.some((authority) => cert.checkIssued(authority) && cert.verify(authority.publicKey))) {
    throw problem(`the certificate${where('cert')} is not signed by the CA${where('ca')}`);
  }
  let matches: boolean;
  try {
    matches = cert.checkPrivateKey(createPrivateKey(credentials.key));
  } catch {
    throw problem(`the key${where('key')} is not a PEM private key`);
  }
  if (!matches) throw problem(`the key${where('key')} is not the certificate's`);
}

/** The CN of a subject as node:crypto prints it (`CN=identity`, one attribute a line). */
export function commonNameOf(subject: string): string | undefined {
  const line = subject.split('\n').find((attribute) => attribute.startsWith('CN='));
  return line?.slice('CN='.length);
}

function pemBlocks(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

function readCredentialFile(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new Error(`RPC credentials: cannot read ${file} (${code})`);
  }
}
