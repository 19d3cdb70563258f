export {
  SwitchyardClient,
  MERCHANT_ACCOUNT_HEADER,
  type CallOptions,
  type EmbedTokenOptions,
  type Schemas,
  type SwitchyardClientOptions,
} from './client';
export { keyThumbprint, TokenSigner, type ApiKeyFile, type Credentials, type TokenClaims } from './credentials';
export { SwitchyardApiError, VALIDATION_ERROR_CODE, type SwitchyardErrorDetail } from './errors';
export { paginate, type Page } from './pagination';
export { DEFAULT_RETRY, type RetryPolicy } from './retry';
export { verifyWebhook, type WebhookHeaders, type WebhookVerification, type WebhookVerifyOptions } from './webhooks';
export type { components, operations, paths } from './generated/schema';
