/**
 * Buyers' personal data behind `buyers.billing-details.read` (issue 22, item 4; docs/roles-and-permissions.md).
 * Billing details — name, email, phone, address, tax id — show in buyers, in a transaction's buyer (stored or
 * guest), in a payment method's buyer, in the dashboard and in webhook payloads. A caller without the scope, from both
 * its token and its key's roles as every scope is checked, gets every `billing_details` member as `null`, whatever
 * the endpoint: one rule at the edge rather than one per resource, so a resource that starts embedding a buyer is
 * covered from its first day.
 */
import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { grantsCover } from '@switchyard/auth';
import { map, type Observable } from 'rxjs';
import { dashboardCallerOf } from '../dashboard/dashboard-auth.guard';
import { CALLER, type Caller } from './caller';

export const BILLING_DETAILS_SCOPE = 'buyers.billing-details.read';
const FIELD = 'billing_details';

/** Whether a token with `scopes`, signed by a key whose roles grant `permissions`, reads billing details. */
export const mayReadBillingDetails = (scopes: readonly string[], permissions: readonly string[]): boolean =>
  grantsCover(scopes, BILLING_DETAILS_SCOPE) && grantsCover(permissions, BILLING_DETAILS_SCOPE);

/** A copy of `value` with every `billing_details` member, at any depth, set to null (absent ones stay absent). */
export function withoutBillingDetails<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withoutBillingDetails) as T;
  if (value === null || typeof value !== 'object' || value instanceof Date || Buffer.isBuffer(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value as Record<string, unknown>)) {
    copy[key] = key === FIELD && member !== undefined ? null : withoutBillingDetails(member);
  }
  return copy as T;
}

/** Every answer to an API caller or a dashboard user without the scope, redacted; public routes have no caller. */
@Injectable()
export class BillingDetailsInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<{ [CALLER]?: Caller }>();
    const caller = request[CALLER];
    const user = dashboardCallerOf(request);
    const may = caller
      ? mayReadBillingDetails(caller.scopes, caller.permissions)
      : user
        ? user.may(BILLING_DETAILS_SCOPE)
        : true;
    if (may) return next.handle();
    return next.handle().pipe(map((body: unknown) => withoutBillingDetails(body)));
  }
}
