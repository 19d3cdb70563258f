/**
 * Serves the secure fields (docs/secure-fields.md): the merchant's module, the frame page and its script. Public — a
 * browser has no token — and not JSON: they are declared with `@Endpoint` all the same, so their routes, their 405s
 * and the OpenAPI document come from one declaration as every other route's do; the document lists them under
 * "Secure fields" with their media type in the description (the declaration has no place for a non-JSON schema).
 * Refusals are the spec's JSON error body, as everywhere.
 */
import { Controller, Req, Res } from '@nestjs/common';
import { Endpoint, type EndpointSpec } from '@switchyard/api';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { FRAME_CONTENT_SECURITY_POLICY, frameQuery, framePage, frameQuerySchema } from './frame-page';
import { secureFieldsAssets, type ServedAsset } from './secure-fields-assets';

const tags = ['Secure fields'];
/** Scripts may be cached briefly and then revalidated (ETag): a deployment changes them under the same URL. */
const SCRIPT_CACHE_CONTROL = 'public, max-age=300, must-revalidate';

const script = (operationId: string, path: string, summary: string): EndpointSpec => ({
  operationId,
  method: 'GET',
  path,
  summary,
  tags,
  auth: 'public',
  merchantAccount: 'ignored',
  status: 200,
  response: { description: 'JavaScript, one ES module (`text/javascript`); 304 when `If-None-Match` holds its ETag' },
});

@Controller()
export class SecureFieldsController {
  @Endpoint(
    script(
      'get_secure_fields_module',
      '/secure-fields/secure-fields.js',
      'The secure fields library for the merchant’s page: one ES module exporting `SecureFields` (`Access-Control-Allow-Origin: *`, so a page on any origin can import it). Not JSON',
    ),
  )
  async module(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    reply.header('access-control-allow-origin', '*').header('cross-origin-resource-policy', 'cross-origin');
    await sendScript(request, reply, 'secure-fields.js');
  }

  @Endpoint(
    script(
      'get_secure_fields_frame_script',
      '/secure-fields/frame.js',
      'The script of the secure fields’ frame page (one ES module). Not JSON',
    ),
  )
  async frameScript(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await sendScript(request, reply, 'frame.js');
  }

  @Endpoint({
    operationId: 'get_secure_fields_frame',
    method: 'GET',
    path: '/secure-fields/frame.html',
    summary:
      'The page inside one secure field’s iframe (`text/html`; any page may frame it, nothing of it is cached). Its input is the only place the card data is in the buyer’s browser. ' +
      'A missing or malformed parameter is a 400. Not JSON',
    tags,
    auth: 'public',
    merchantAccount: 'ignored',
    query: frameQuerySchema,
    status: 200,
    response: { description: 'HTML (`text/html`)' },
  })
  async frame(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const field = frameQuery(request.query);
    await reply
      .status(200)
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', FRAME_CONTENT_SECURITY_POLICY)
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .header('x-content-type-options', 'nosniff')
      .send(framePage(field));
  }
}

async function sendScript(request: FastifyRequest, reply: FastifyReply, name: ServedAsset): Promise<void> {
  const asset = await secureFieldsAssets.get(name);
  reply
    .header('content-type', 'text/javascript; charset=utf-8')
    .header('cache-control', SCRIPT_CACHE_CONTROL)
    .header('etag', asset.etag)
    .header('x-content-type-options', 'nosniff');
  const ifNoneMatch = request.headers['if-none-match'];
  if (
    typeof ifNoneMatch === 'string' &&
    ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === asset.etag)
  ) {
    await reply.status(304).send();
    return;
  }
  await reply.status(200).send(asset.body);
}
