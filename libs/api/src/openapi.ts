/** The OpenAPI 3.1.0 document, generated from the endpoint declarations. */
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { EndpointSpec } from './endpoint';

const errorDetail = z
  .object({
    location: z.enum(['body', 'query', 'path', 'header', 'unknown']),
    pointer: z.string(),
    message: z.string(),
    type: z.string(),
  })
  .meta({ id: 'ErrorDetail' });

export const errorBodySchema = z
  .object({
    type: z.literal('error'),
    code: z.string(),
    status: z.number().int(),
    message: z.string(),
    details: z.array(errorDetail),
    resource_id: z.uuid().optional().meta({ description: 'Present only on 409.' }),
  })
  .meta({ id: 'Error' });

export const validationErrorSchema = z
  .object({
    detail: z.array(
      z.object({
        loc: z.array(z.union([z.string(), z.number().int()])),
        msg: z.string(),
        type: z.string(),
        input: z.unknown(),
        ctx: z.record(z.string(), z.unknown()),
      }),
    ),
  })
  .meta({ id: 'HTTPValidationError' });

const errorStatuses: Record<string, string> = {
  '400': 'The request was invalid.',
  '401': 'No valid API authentication found.',
  '403': 'Invalid credentials or no permission to act on the resource.',
  '404': 'The resource was not found.',
  '405': 'The method is not allowed.',
  '409': 'A duplicate record exists.',
  '425': 'The request was too early.',
  '429': 'Too many requests.',
  '500': 'The server encountered an error.',
  '502': 'The server encountered an error.',
  '504': 'The server encountered an error.',
};

/** The gateway's request body limit, unless a route sets its own (settlement files). */
export const BODY_LIMIT_BYTES = 1024 * 1024;
const payloadTooLarge = `The request body is over the body limit: ${BODY_LIMIT_BYTES} bytes (1 MiB) unless the operation says otherwise. Code \`payload_too_large\`.`;

export function buildOpenApiDocument(endpoints: readonly EndpointSpec[], info: { title: string; description: string }) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'An ES512 JWT signed with the private key of an API key pair; header `kid` is the RFC 7638 thumbprint of its public key.',
  });
  const merchantHeader = z.object({
    'x-service-merchant-account-id': z
      .string()
      .optional()
      .meta({ description: 'The merchant account of the request; `default` when absent.' }),
  });
  const idempotencyHeader = z.object({
    'Idempotency-Key': z.string().min(1).max(255).optional().meta({
      description:
        'The first answer to this key is kept 24 h and replayed to a retry with the same body; another body is a 409.',
    }),
  });

  for (const spec of endpoints) {
    const responses: Record<string, unknown> = {};
    responses[String(spec.status)] = spec.response?.schema
      ? { description: spec.response.description, content: { 'application/json': { schema: spec.response.schema } } }
      : { description: spec.response?.description ?? 'No content' };
    if (spec.auth !== 'public') {
      for (const [status, description] of Object.entries(errorStatuses)) {
        responses[status] = { description, content: { 'application/json': { schema: errorBodySchema } } };
      }
      if (spec.body)
        responses['413'] = {
          description: payloadTooLarge,
          content: { 'application/json': { schema: errorBodySchema } },
        };
      responses['422'] = {
        description: 'Validation error.',
        content: { 'application/json': { schema: validationErrorSchema } },
      };
    }
    if (spec.enumerationLimit) {
      responses['429'] = {
        description:
          'Too many requests: the enumeration-prevention rate limit (docs/rate-limits.md). Code `too_many_requests`.',
        headers: {
          'Retry-After': {
            description: 'Seconds until one request is allowed again (whole seconds, rounded up).',
            schema: { type: 'integer', minimum: 1 },
          },
        },
        content: { 'application/json': { schema: errorBodySchema } },
      };
    }
    registry.registerPath({
      method: spec.method.toLowerCase() as 'get',
      path: spec.path,
      operationId: spec.operationId,
      summary: spec.summary,
      tags: [...spec.tags],
      ...(spec.auth === 'public'
        ? { security: [], description: 'Public: no token.' }
        : {
            security: [{ bearerAuth: [] }],
            description: `Scopes: ${spec.auth.anyOf.map((scope) => `\`${scope}\``).join(' or ')}.`,
            // Machine-readable for clients (which scopes to sign into a token) and the reference page.
            'x-required-scopes': [...spec.auth.anyOf],
          }),
      request: {
        ...(spec.params ? { params: spec.params } : {}),
        ...(spec.query ? { query: spec.query } : {}),
        ...requestHeaders(spec, merchantHeader, idempotencyHeader),
        ...(spec.body ? { body: { required: true, content: { 'application/json': { schema: spec.body } } } } : {}),
      },
      responses: responses as never,
    });
  }

  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: info.title, version: '1.0.0', description: info.description },
    servers: [{ url: '/' }],
  });
}

function requestHeaders(
  spec: EndpointSpec,
  merchantHeader: z.ZodObject,
  idempotencyHeader: z.ZodObject,
): { headers?: z.ZodObject } {
  const merchant = spec.auth !== 'public' && spec.merchantAccount !== 'ignored';
  if (merchant && spec.idempotencyKey) return { headers: merchantHeader.extend(idempotencyHeader.shape) };
  if (merchant) return { headers: merchantHeader };
  if (spec.idempotencyKey) return { headers: idempotencyHeader };
  return {};
}
