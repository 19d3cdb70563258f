/**
 * The 3-D Secure directory port: how Switchyard (acting as the 3DS Server) asks a card scheme's directory server
 * to authenticate a cardholder, and reads the result once a challenge is done. The default adapter talks to the
 * simulator's directory server / ACS over HTTP (`simulator/simulator-directory-server.ts`, docs/simulator.md).
 *
 * EMV 3DS transaction statuses (transStatus): Y authenticated, A attempted (liability shift without proof),
 * N not authenticated, R rejected by the issuer, U could not be performed, C challenge required.
 */
import type { CardDetails } from './connector';

export type ThreeDSecureTransactionStatus = 'Y' | 'A' | 'N' | 'R' | 'U' | 'C';

/** The merchant as the directory server knows it: a merchant account's 3-D Secure configuration for the scheme. */
export interface ThreeDSecureMerchant {
  readonly acquirerBin: string;
  readonly acquirerMerchantId: string;
  readonly name: string;
  readonly countryCode: string;
  readonly categoryCode: string;
  readonly url: string;
}

export interface ThreeDSecureAuthenticationRequest {
  /** Our transaction id: echoed back, and the key of repeated requests. */
  readonly reference: string;
  readonly amount: number;
  readonly currency: string;
  readonly card: CardDetails;
  readonly merchant: ThreeDSecureMerchant;
  /** Where the ACS sends the buyer's browser when a challenge is done (303, GET). */
  readonly returnUrl: string;
}

export interface ThreeDSecureAuthentication {
  /**
   * The directory server's id of this authentication: the key of `result` (its dsTransID is
   * `directoryServerTransactionId`).
   */
  readonly authenticationId: string;
  readonly version: string;
  readonly transactionStatus: ThreeDSecureTransactionStatus;
  /** `challenge` once a challenge was required, whatever its result. */
  readonly method: 'frictionless' | 'challenge';
  /** Set while a challenge is outstanding (`transactionStatus` C): where the buyer's browser must go. */
  readonly challengeUrl?: string;
  /** Electronic commerce indicator, set on Y and A. */
  readonly eci?: string;
  /** The authentication value (CAVV / AAV), base64, set on Y and A. */
  readonly cavv?: string;
  /** dsTransID, a UUID. */
  readonly directoryServerTransactionId: string;
  /** Why the issuer refused or could not authenticate (transStatusReason), on N, R and U. */
  readonly statusReason?: string;
}

export interface ThreeDSecureDirectory {
  /** Starts an authentication: frictionless answers are final; `C` carries the challenge URL. */
  authenticate(request: ThreeDSecureAuthenticationRequest): Promise<ThreeDSecureAuthentication>;
  /** The authentication as it is now (after the buyer's challenge: Y or N; still C while outstanding). */
  result(authenticationId: string): Promise<ThreeDSecureAuthentication>;
}
