/** Builds the gateway's HTTP application (NestJS on Fastify) around the dependencies a runtime gives it. */
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { registerBodyParsers } from './http/json-body';
import { GatewayModule, type GatewayDependencies } from './gateway.module';

export const BODY_LIMIT_BYTES = 1024 * 1024;

export async function createGatewayApp(dependencies: GatewayDependencies): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({ bodyLimit: BODY_LIMIT_BYTES, return503OnClosing: true });
  const fastify = adapter.getInstance();
  registerBodyParsers(fastify);
  // Failures before a route handler runs (media type, body size, the JSON above) reach Nest's Fastify error
  // handler, which hands them to ApiExceptionFilter like every other error.

  const app = await NestFactory.create<NestFastifyApplication>(GatewayModule.register(dependencies), adapter, {
    logger: ['error', 'warn'],
    abortOnError: false,
    // The parsers above replace Nest's own.
    bodyParser: false,
  });
  await app.init();
  // Fastify serves only once ready; `listen()` does this, tests that use the bare server need it done here.
  await fastify.ready();
  return app;
}
