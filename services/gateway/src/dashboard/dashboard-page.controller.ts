/**
 * The dashboard's page and its two files: plain Nest routes (no `@Endpoint`: not API operations, no token, not in the
 * OpenAPI document). The page is a shell for the browser app; everything it shows comes from `/dashboard/api/...`.
 * Its content security policy allows only the dashboard's own script, style and requests, and no framing.
 */
import { Controller, Get, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { dashboardAssets } from './dashboard-assets';
import type { DashboardAssetName } from '@switchyard/dashboard/build/bundle';

export const DASHBOARD_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const page = (version: string): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Switchyard dashboard</title>
<link rel="stylesheet" href="/dashboard/app.css?v=${version}">
<script type="module" src="/dashboard/app.js?v=${version}"></script>
</head>
<body>
<div id="root"></div>
<noscript>The Switchyard dashboard needs JavaScript.</noscript>
</body>
</html>
`;

const pageHeaders = (reply: FastifyReply): FastifyReply =>
  reply
    .header('cache-control', 'no-store')
    .header('content-security-policy', DASHBOARD_CONTENT_SECURITY_POLICY)
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff');

@Controller('dashboard')
export class DashboardPageController {
  @Get()
  async page(@Res() reply: FastifyReply): Promise<void> {
    const script = await dashboardAssets.get('app.js');
    await pageHeaders(reply)
      .status(200)
      .header('content-type', 'text/html; charset=utf-8')
      .send(page(script.etag.slice(1, 13)));
  }

  @Get('app.js')
  async script(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await sendAsset(request, reply, 'app.js', 'text/javascript; charset=utf-8');
  }

  @Get('app.css')
  async style(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await sendAsset(request, reply, 'app.css', 'text/css; charset=utf-8');
  }
}

async function sendAsset(
  request: FastifyRequest,
  reply: FastifyReply,
  name: DashboardAssetName,
  contentType: string,
): Promise<void> {
  const asset = await dashboardAssets.get(name);
  reply
    .header('content-type', contentType)
    .header('cache-control', 'private, max-age=300, must-revalidate')
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
