/**
 * `/docs`: the API reference, rendered in the browser by Redoc from `/openapi.json` — the same document the client's
 * types are generated from, so what a reader sees is what the service does: every path, its scopes
 * (`x-required-scopes`, and in each description), its schemas and `info.description`'s authentication guide. Plain
 * Nest routes (no `@Endpoint`: pages, not API operations; not in the document), public, served offline: the renderer
 * comes from node_modules, nothing from a CDN, and the content security policy lets the page reach only this origin.
 */
import { Controller, Get, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { redocScript } from './api-reference-assets';

/** Redoc styles with styled-components (inline `<style>`) and searches in a worker it starts from a blob URL. */
export const API_REFERENCE_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; " +
  "connect-src 'self'; worker-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Switchyard API reference</title>
<link rel="icon" href="data:,">
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<div id="redoc"></div>
<noscript>The API reference needs JavaScript; the document itself is at <a href="/openapi.json">/openapi.json</a>.</noscript>
<script src="/docs/redoc.standalone.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

/** Redoc's options: https://redocly.com/docs/redoc/config (the document from this origin, responses 2xx open). */
const INIT = `Redoc.init('/openapi.json', {
  expandResponses: '200,201',
  jsonSampleExpandLevel: 3,
  requiredPropsFirst: true,
  sortPropsAlphabetically: false,
  hideHostname: false,
}, document.getElementById('redoc'));
`;

const common = (reply: FastifyReply): FastifyReply =>
  reply.header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer');

@Controller('docs')
export class ApiReferenceController {
  @Get()
  async page(@Res() reply: FastifyReply): Promise<void> {
    await common(reply)
      .status(200)
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header('content-security-policy', API_REFERENCE_CONTENT_SECURITY_POLICY)
      .header('x-frame-options', 'DENY')
      .send(PAGE);
  }

  @Get('init.js')
  async init(@Res() reply: FastifyReply): Promise<void> {
    await common(reply)
      .status(200)
      .header('content-type', 'text/javascript; charset=utf-8')
      .header('cache-control', 'no-cache')
      .send(INIT);
  }

  @Get('redoc.standalone.js')
  async renderer(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const script = redocScript();
    common(reply)
      .header('content-type', 'text/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=3600, must-revalidate')
      .header('etag', script.etag);
    const ifNoneMatch = request.headers['if-none-match'];
    if (
      typeof ifNoneMatch === 'string' &&
      ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === script.etag)
    ) {
      await reply.status(304).send();
      return;
    }
    await reply.status(200).send(script.body);
  }
}
