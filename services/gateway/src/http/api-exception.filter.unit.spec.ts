/** A failure's log line names the method and path, never the query string (issue 22, item 7). */
import { ApiError } from '@switchyard/api';
import type { FastifyRequest } from 'fastify';
import { toApiFailure } from './api-exception.filter';

describe('the log line of a failed request', () => {
  const request = {
    method: 'GET',
    url: '/transactions/abc/buyer-return?token=s3cr3t-return-token&email=ada@example.com',
    routeOptions: {},
  } as unknown as FastifyRequest;

  it.each([
    ['an unexpected error (500)', new Error('boom')],
    ['a 5xx ApiError', ApiError.badGateway(new Error('provider down'))],
  ])('%s: path only', (_what, error) => {
    const lines: string[] = [];
    const failure = toApiFailure(error, request, { error: (line: string) => void lines.push(line) });
    expect(failure.status).toBeGreaterThanOrEqual(500);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^GET \/transactions\/abc\/buyer-return: /);
    expect(lines[0]).not.toContain('s3cr3t');
    expect(lines[0]).not.toContain('ada@example.com');
  });
});
