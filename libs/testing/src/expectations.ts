import { expect } from 'vitest';

/** The spec's error body, exactly: `{type: "error", code, status, message, details[]}`. */
export function expectErrorBody(body: unknown, status: number, code: string): void {
  expect(body).toEqual({ type: 'error', code, status, message: expect.any(String), details: expect.any(Array) });
}
