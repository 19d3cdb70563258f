/**
 * The one place where the webhooks service's domain errors become the spec's error responses. Codes not listed
 * (an invalid URL or event name, too many active secrets) are 400 `bad_request` with one detail per field.
 */
import { domainErrorMapper } from '@switchyard/service';

export const toApiError = domainErrorMapper({
  webhook_subscription_not_found: 404,
  webhook_secret_not_found: 404,
  webhook_subscription_exists: 409,
  webhook_secret_exists: 409,
  instance_level_forbidden: 403,
});
