import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import secureJsonParse from 'secure-json-parse';

/**
 * The gateway's JSON body parser. An empty body is `{}` (clients send an empty body with a JSON content type for
 * operations whose body is optional); `__proto__` and `constructor.prototype` keys are refused rather than
 * silently dropped; anything unparseable is a 400.
 */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return secureJsonParse.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    throw Object.assign(new SyntaxError('The request body is not valid JSON'), {
      statusCode: 400,
      code: 'FST_ERR_CTP_INVALID_JSON_BODY',
    });
  }
}

/** How one route takes its body, where it differs from every other route (JSON, within the global limit). */
export interface RouteBodyOptions {
  /**
   * Keep the body exactly as received (decoded as UTF-8), whatever its content type, as the request's `body`
   * string: nothing is parsed. For provider notifications, whose signatures are computed over the bytes.
   */
  readonly raw?: boolean;
  /** Replaces the global body limit for this route. */
  readonly limitBytes?: number;
}

/** Declares a route's {@link RouteBodyOptions}; read by the parsers that {@link registerBodyParsers} installs. */
export const RouteBody = (options: RouteBodyOptions): MethodDecorator => RouteConfig({ body: options });

const bodyOptionsOf = (config: unknown): RouteBodyOptions | undefined =>
  (config as { body?: RouteBodyOptions } | undefined)?.body;
const isRawRoute = (request: FastifyRequest): boolean => bodyOptionsOf(request.routeOptions.config)?.raw === true;

/**
 * Installs the gateway's body handling on the Fastify instance (before any route is registered): JSON through
 * {@link parseJsonBody}; every other content type refused (415, rendered as a 400), except on raw routes, which
 * take any body as received.
 */
export function registerBodyParsers(fastify: FastifyInstance): void {
  fastify.addHook('onRoute', (route) => {
    const limitBytes = bodyOptionsOf(route.config)?.limitBytes;
    if (limitBytes !== undefined) route.bodyLimit = limitBytes;
  });

  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (isRawRoute(request)) {
      done(null, text);
      return;
    }
    try {
      done(null, parseJsonBody(text));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  // Fastify's own text/plain parser stays (it keeps the text as it is); any other content type, or a body without
  // one, reaches this parser: refused as before, except on raw routes.
  fastify.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    if (isRawRoute(request)) done(null, typeof body === 'string' ? body : body.toString('utf8'));
    else
      done(
        Object.assign(new Error('Unsupported Media Type'), { statusCode: 415, code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' }),
        undefined,
      );
  });
}
