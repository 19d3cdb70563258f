/**
 * The dashboard's API key pairs: list, create (the private key is in the answer, once) and revoke. Identity applies
 * the role rules with the signed-in user as the assigner (`assertValidRoleSet(roles, 'api-key-pair', 'user')`): a
 * dashboard user may give a key `administrator` or `key-manager`, which an API key may not — but only permissions
 * its own roles hold (`administrator` only from an administrator), and it revokes only keys it could have made.
 */
import { Controller, Get, HttpCode, Inject, Param, Post, Query, Req, UseGuards } from '@nestjs/common';
import { pageQuery, type Page } from '@switchyard/api';
import {
  apiKeyPairCreateSchema,
  apiKeyPairPatterns,
  type ApiKeyPair,
  type CreatedApiKeyPair,
} from '@switchyard/contracts';
import type { RpcCallOptions } from '@switchyard/rpc';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { DashboardAuthGuard, DashboardCallerOf, SignedIn, type DashboardCaller } from './dashboard-auth.guard';
import { DASHBOARD, type DashboardDependencies } from './dashboard-dependencies';
import { bodyOf, pathOf, queryOf } from './dashboard-query';

const byKey = z.object({ api_key_pair_id: z.uuid() });
/** A key made in the dashboard is always generated here (its private key shown once): no `public_key` of the user's. */
const createBody = apiKeyPairCreateSchema.omit({ public_key: true });
/** The signed-in user acts (the call's actor, beside the payload). */
const actingUser = (caller: DashboardCaller): RpcCallOptions => ({
  actor: { type: 'dashboard-user', id: caller.user.id },
});

@Controller('dashboard/api/api-key-pairs')
@UseGuards(DashboardAuthGuard)
export class DashboardApiKeysController {
  constructor(@Inject(DASHBOARD) private readonly dashboard: DashboardDependencies) {}

  @Get()
  @SignedIn('api-key-pairs.read')
  list(@Query() query: unknown, @DashboardCallerOf() caller: DashboardCaller): Promise<Page<ApiKeyPair>> {
    const { limit, cursor } = queryOf(pageQuery({ maxLimit: 100, defaultLimit: 100 }), query);
    return this.dashboard.rpc.call(
      apiKeyPairPatterns.list,
      { limit, ...(cursor ? { cursor } : {}) },
      actingUser(caller),
    );
  }

  @Post()
  @HttpCode(201)
  @SignedIn('api-key-pairs.write')
  create(@Req() request: FastifyRequest, @DashboardCallerOf() caller: DashboardCaller): Promise<CreatedApiKeyPair> {
    const body = bodyOf(createBody, request.body);
    return this.dashboard.rpc.call(apiKeyPairPatterns.create, { body }, actingUser(caller));
  }

  /** `active: false`: every token signed with the key is refused from now on (this gateway's cache drops it at once). */
  @Post(':api_key_pair_id/revoke')
  @HttpCode(200)
  @SignedIn('api-key-pairs.write')
  async revoke(@Param() params: unknown, @DashboardCallerOf() caller: DashboardCaller): Promise<ApiKeyPair> {
    const { api_key_pair_id: id } = pathOf(byKey, params);
    const updated = await this.dashboard.rpc.call<ApiKeyPair>(
      apiKeyPairPatterns.update,
      { id, body: { active: false } },
      actingUser(caller),
    );
    this.dashboard.keyDirectory.invalidate({ id: updated.id, kid: updated.kid });
    return updated;
  }
}
