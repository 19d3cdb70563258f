/**
 * RPC credentials for tests that start the distributed runtime or talk to its TCP RPC: one set (a CA and a
 * certificate per service) made on first use in this test process, in a private temporary directory removed at exit.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  createRpcCredentialSet,
  writeRpcCredentialSet,
  type RpcCredentials,
  type RpcCredentialSet,
} from '@switchyard/rpc/src/rpc-credentials';

export interface TestRpcCredentials {
  /** The directory `rpc-credentials create` would have made. */
  readonly dir: string;
  /** The settings a service process needs: `RPC_CREDENTIALS_DIR`. */
  readonly env: { readonly RPC_CREDENTIALS_DIR: string };
  readonly set: RpcCredentialSet;
  /** The credentials of one service, as that service's process loads them. */
  of(service: string): RpcCredentials;
}

let made: Promise<TestRpcCredentials> | undefined;

export function rpcCredentialsForTests(): Promise<TestRpcCredentials> {
  made ??= (async () => {
    const set = await createRpcCredentialSet({ days: 2 });
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-rpc-credentials-')), 'credentials');
    writeRpcCredentialSet(dir, set);
    process.once('exit', () => fs.rmSync(path.dirname(dir), { recursive: true, force: true }));
    return {
      dir,
      env: { RPC_CREDENTIALS_DIR: dir },
      set,
      of: (service) => {
        const own = set.services[service];
        if (!own) throw new Error(`no test RPC credentials for ${service}`);
        return { service, ca: set.ca.cert, ...own };
      },
    };
  })();
  return made;
}
