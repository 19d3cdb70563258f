/**
 * The one place where the vault service's domain errors become the spec's error responses. Its slices answer their
 * own not-found and conflict cases before a command reaches a decider, so every code a decider still refuses with
 * (`payment_method_exists`, `buyer_exists`, `account_updater_job_exists`, …) is a 400 `bad_request`.
 */
import { domainErrorMapper } from '@switchyard/service';

export const toApiError = domainErrorMapper({});
