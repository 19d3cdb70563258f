/** The vault service's slices share a `ServiceContext` (`@switchyard/service`) and render errors with `errors.ts`. */
import { withApiErrors, type ServiceContext, type ServiceSlice } from '@switchyard/service';
import { toApiError } from './errors';

export type VaultContext = ServiceContext;
export type VaultSlice = ServiceSlice;

/** Runs a command, rendering domain errors as the spec's errors. */
export const asApiErrors = withApiErrors(toApiError);
