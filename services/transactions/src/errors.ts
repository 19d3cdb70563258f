/** The one place where the transactions service's domain errors become the spec's error responses. */
import { domainErrorMapper } from '@switchyard/service';

export const toApiError = domainErrorMapper({
  payment_service_exists: 409,
  payment_service_not_found: 404,
});
