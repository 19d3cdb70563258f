/**
 * What a provider's answer means for a transaction: pure mappings from the connectors' answers (an authorization, a
 * capture, void or refund, a notification) to the decider's results and to the wire's status and codes.
 */
import type {
  AuthorizationResult as ConnectorAuthorizationResult,
  CapabilityRefusal,
  ProviderResponse,
} from '@switchyard/connectors';
import type { ProviderError } from './transaction';
import type { AuthorizationResult, ProviderOutcome } from './transaction.decide';

export function providerError(answer: {
  errorCode?: string;
  rawResponseCode?: string;
  rawResponseDescription?: string;
}): ProviderError {
  return {
    errorCode: answer.errorCode ?? 'unknown_error',
    ...(answer.rawResponseCode !== undefined ? { rawResponseCode: answer.rawResponseCode } : {}),
    ...(answer.rawResponseDescription !== undefined ? { rawResponseDescription: answer.rawResponseDescription } : {}),
  };
}

/** The AVS and CVV results of a provider's answer, when it has them (a decline does, a failure does not). */
export const verificationCodes = (answer: { avsResponseCode?: string | null; cvvResponseCode?: string | null }) => ({
  ...(answer.avsResponseCode ? { avsResponseCode: answer.avsResponseCode } : {}),
  ...(answer.cvvResponseCode ? { cvvResponseCode: answer.cvvResponseCode } : {}),
});

/** A connector's answer to authorize as the decider's result; null when nothing is known yet (`unknown`). */
export function toAuthorizationResult(
  answer: ConnectorAuthorizationResult | CapabilityRefusal | ProviderResponse,
  amount: number,
): AuthorizationResult | null {
  switch (answer.outcome) {
    case 'refused':
      return {
        outcome: 'failed',
        error: {
          errorCode: 'invalid_service_configuration',
          rawResponseDescription: `capability ${answer.capability} is off for this payment service`,
        },
      };
    case 'succeeded': {
      const a = answer as ConnectorAuthorizationResult;
      return {
        outcome: 'succeeded',
        authorizedAmount: a.authorizedAmount ?? amount,
        ...(a.providerTransactionId ? { paymentServiceTransactionId: a.providerTransactionId } : {}),
        ...(a.avsResponseCode ? { avsResponseCode: a.avsResponseCode } : {}),
        ...(a.cvvResponseCode ? { cvvResponseCode: a.cvvResponseCode } : {}),
        ...(a.rawResponseCode ? { rawResponseCode: a.rawResponseCode } : {}),
      };
    }
    case 'declined':
    case 'failed':
      return {
        outcome: answer.outcome,
        error: providerError(answer),
        ...verificationCodes(answer as ConnectorAuthorizationResult),
      };
    case 'pending':
      return {
        outcome: 'pending',
        ...(answer.providerTransactionId ? { paymentServiceTransactionId: answer.providerTransactionId } : {}),
      };
    case 'buyer_approval_required': {
      const a = answer as ConnectorAuthorizationResult;
      return {
        outcome: 'buyer_approval_required',
        ...(a.approvalUrl ? { approvalUrl: a.approvalUrl } : {}),
        ...(a.providerTransactionId ? { paymentServiceTransactionId: a.providerTransactionId } : {}),
      };
    }
    case 'unknown':
      return null;
  }
}

/** A connector's answer to capture, void or refund as the decider's outcome; null while pending or unknown. */
export function toOutcome(
  answer: ProviderResponse | CapabilityRefusal,
  providerOperationId?: string,
): ProviderOutcome | null {
  switch (answer.outcome) {
    case 'refused':
      return {
        outcome: 'failed',
        error: {
          errorCode: 'invalid_service_configuration',
          rawResponseDescription: `capability ${answer.capability} is off for this payment service`,
        },
      };
    case 'succeeded':
      return {
        outcome: 'succeeded',
        ...(answer.rawResponseCode ? { rawResponseCode: answer.rawResponseCode } : {}),
        ...(providerOperationId ? { providerOperationId } : {}),
      };
    case 'declined':
    case 'failed':
      return { outcome: answer.outcome, error: providerError(answer) };
    default:
      return null;
  }
}

export function operationStatus<S extends string>(answer: ProviderResponse, allowed: readonly S[]): S {
  const status = answer.outcome === 'unknown' ? 'pending' : answer.outcome;
  return (allowed.includes(status as S) ? status : 'failed') as S;
}

export const codesOf = (answer: ProviderResponse) => ({
  code: answer.errorCode ?? null,
  raw_response_code: answer.rawResponseCode ?? null,
  raw_response_description: answer.rawResponseDescription ?? null,
});
