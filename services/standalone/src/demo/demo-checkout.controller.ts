/**
 * The demo checkout's routes (embedded runtime, DEMO_CHECKOUT): plain Nest routes, not API operations — no
 * `@Endpoint`, so no token, no scopes and no place in the OpenAPI document. Nothing they answer is cached.
 */
import { randomBytes } from 'node:crypto';
import { Controller, Get, HttpCode, Inject, Param, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { DemoCheckout, type DemoCheckoutSession, type DemoTransaction } from './demo-checkout';
import { demoPageContentSecurityPolicy, renderDemoCheckoutPage } from './demo-checkout.page';

export const DEMO_CHECKOUT = Symbol('DEMO_CHECKOUT');

@Controller('demo/checkout')
export class DemoCheckoutController {
  constructor(@Inject(DEMO_CHECKOUT) private readonly demo: DemoCheckout) {}

  /** The merchant page. */
  @Get()
  page(@Res({ passthrough: true }) reply: FastifyReply): string {
    const options = { serviceUrl: this.demo.serviceUrl(), nonce: randomBytes(18).toString('base64') };
    reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', demoPageContentSecurityPolicy(options));
    return renderDemoCheckoutPage(options);
  }

  /** The merchant backend: a checkout session and its embed token. */
  @Post('session')
  @HttpCode(201)
  session(@Res({ passthrough: true }) reply: FastifyReply): Promise<DemoCheckoutSession> {
    reply.header('cache-control', 'no-store');
    return this.demo.createSession();
  }

  /** The merchant backend reads a demo checkout's transaction back. */
  @Get('transactions/:transaction_id')
  transaction(
    @Param('transaction_id') id: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<DemoTransaction> {
    reply.header('cache-control', 'no-store');
    return this.demo.transaction(id);
  }
}
