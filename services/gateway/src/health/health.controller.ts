import { Controller, Inject, Res } from '@nestjs/common';
import { Endpoint } from '@switchyard/api';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { READINESS_CHECKS, type ReadinessCheck } from '../tokens';

const readinessSchema = z
  .object({ status: z.enum(['ready', 'not_ready']), checks: z.record(z.string(), z.string()) })
  .meta({ id: 'Readiness' });

// `node` is the Node.js runtime that answers (`process.version`), so an operator sees which one runs.
const livenessSchema = z
  .object({ status: z.literal('ok'), node: z.string().meta({ example: 'v24.21.0' }) })
  .meta({ id: 'Liveness' });

@Controller()
export class HealthController {
  constructor(@Inject(READINESS_CHECKS) private readonly checks: readonly ReadinessCheck[]) {}

  @Endpoint({
    operationId: 'get_health',
    method: 'GET',
    path: '/healthz',
    summary: 'Liveness: the process answers',
    tags: ['Operations'],
    auth: 'public',
    status: 200,
    response: { description: 'Alive', schema: livenessSchema },
  })
  health() {
    return { status: 'ok' as const, node: process.version };
  }

  @Endpoint({
    operationId: 'get_readiness',
    method: 'GET',
    path: '/readyz',
    summary: 'Readiness: every adapter the gateway needs is connected (503 otherwise)',
    tags: ['Operations'],
    auth: 'public',
    status: 200,
    response: { description: 'Ready', schema: readinessSchema },
  })
  async ready(@Res({ passthrough: true }) reply: FastifyReply) {
    const results = await Promise.all(
      this.checks.map(async (check) => {
        try {
          await withTimeout(check.check(), 2_000);
          return [check.name, 'ok'] as const;
        } catch (error) {
          return [check.name, `unavailable: ${(error as Error).message}`] as const;
        }
      }),
    );
    const ready = results.every(([, result]) => result === 'ok');
    if (!ready) reply.status(503);
    return { status: ready ? 'ready' : 'not_ready', checks: Object.fromEntries(results) };
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
