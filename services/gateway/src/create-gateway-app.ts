/** Builds the gateway's HTTP application (NestJS on Fastify) around the dependencies a runtime gives it. */
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { BODY_LIMIT_BYTES } from '@switchyard/api';
import { renderClientError, renderFrameworkError } from './http/framework-errors';
import { registerBodyParsers } from './http/json-body';
import { registerRequestContext } from './http/request-context';
import { GatewayModule, type GatewayDependencies } from './gateway.module';
import { registerMetrics } from './health/metrics';

/** 1 MiB: a larger body is a 413 in the spec's error body (settlement files set their own limit). */
export { BODY_LIMIT_BYTES };

export async function createGatewayApp(dependencies: GatewayDependencies): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    return503OnClosing: true,
    // What Fastify would answer in its own body: a URL that does not decode, a request that is not HTTP/1.1.
    frameworkErrors: renderFrameworkError,
    clientErrorHandler: renderClientError,
    // TRUSTED_PROXIES: only these peers' X-Forwarded-For sets request.ip (the sign-in limit's address); none by default.
    trustProxy:
      dependencies.trustedProxies && dependencies.trustedProxies.length > 0 ? [...dependencies.trustedProxies] : false,
  });
  const fastify = adapter.getInstance();
  registerBodyParsers(fastify);
  registerRequestContext(fastify, dependencies.log);
  if (dependencies.metricsEnabled !== false) registerMetrics(fastify);
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
