/**
 * How a service's domain errors become the spec's error responses: each service lists the codes that are not a
 * plain 400 (conflicts, missing resources, forbidden assignments) in one table; everything else a decider refuses
 * is a 400 with one detail per field.
 */
import { ApiError } from '@switchyard/api';
import { DomainError } from '@switchyard/decider';
import { WrongExpectedRevisionError } from '@switchyard/eventstore';

export type DomainErrorStatuses = Readonly<Record<string, 403 | 404 | 409>>;

export function domainErrorMapper(statuses: DomainErrorStatuses): (error: unknown) => unknown {
  return (error) => {
    if (error instanceof DomainError) {
      const details = error.details.map((detail) => ({
        location: 'body' as const,
        pointer: `/${detail.field}`,
        message: detail.message,
        type: error.code,
      }));
      const status = statuses[error.code];
      if (status === 404) return ApiError.notFound();
      if (status !== undefined) return new ApiError(status, error.message, details, { cause: error });
      return ApiError.badRequest(error.message, details);
    }
    // handleCommand retried and still lost the race: the caller may retry.
    if (error instanceof WrongExpectedRevisionError) {
      return new ApiError(409, 'The resource was changed by another request; retry', [], {
        cause: error,
        retryable: true,
      });
    }
    return error;
  };
}

/** Runs a command, rendering domain errors with the service's mapping. */
export const withApiErrors =
  (toApiError: (error: unknown) => unknown) =>
  async <T>(action: () => Promise<T>): Promise<T> => {
    try {
      return await action();
    } catch (error) {
      throw toApiError(error);
    }
  };
