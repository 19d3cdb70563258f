/** Injection tokens: what the gateway is given by the runtime that composes it (embedded or distributed). */
export const RPC_CLIENT = Symbol('RPC_CLIENT');
export const TOKEN_VERIFIER = Symbol('TOKEN_VERIFIER');
export const READINESS_CHECKS = Symbol('READINESS_CHECKS');
export const KEY_DIRECTORY = Symbol('KEY_DIRECTORY');
export const KEY_USAGE = Symbol('KEY_USAGE');
export const THREE_DS_CONFIGURATIONS = Symbol('THREE_DS_CONFIGURATIONS');

/** A named dependency the gateway needs before it is ready; resolves when reachable. */
export interface ReadinessCheck {
  readonly name: string;
  check(): Promise<void>;
}
