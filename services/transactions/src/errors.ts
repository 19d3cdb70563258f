/**
 * The one place where the transactions service's domain errors become the spec's error responses. Codes not listed
 * (money limits, states that refuse an operation, tracking rules) are 400 `bad_request` with the rule's message.
 */
import { domainErrorMapper } from '@switchyard/service';

export const toApiError = domainErrorMapper({
  payment_service_exists: 409,
  payment_service_not_found: 404,
  transaction_not_found: 404,
  capture_not_found: 404,
  refund_not_found: 404,
  transaction_exists: 409,
  capture_exists: 409,
  refund_exists: 409,
  flow_rule_not_found: 404,
  flow_rule_exists: 409,
});
