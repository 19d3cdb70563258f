/** The one place where the identity service's domain errors become the spec's error responses. */
import { domainErrorMapper } from '@switchyard/service';

export const toApiError = domainErrorMapper({
  merchant_account_exists: 409,
  api_key_pair_exists: 409,
  user_exists: 409,
  user_email_taken: 409,
  three_ds_configuration_exists: 409,
  api_key_pair_not_found: 404,
  user_not_found: 404,
  merchant_account_not_found: 404,
  three_ds_configuration_not_found: 404,
  role_assignment_forbidden: 403,
  key_management_forbidden: 403,
  user_inactive: 403,
});
