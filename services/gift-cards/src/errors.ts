/**
 * The one place where the gift cards service's domain errors become the spec's error responses. Codes not listed are
 * 400 `bad_request` with one detail per field.
 */
import { domainErrorMapper, withApiErrors } from '@switchyard/service';

export const toApiError = domainErrorMapper({ gift_card_not_found: 404, gift_card_exists: 409 });

/** Runs a command, rendering domain errors as the spec's errors. */
export const asApiErrors = withApiErrors(toApiError);
