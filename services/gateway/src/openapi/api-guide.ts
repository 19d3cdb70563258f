/**
 * The document's introduction (`info.description`, Markdown): what a caller needs before the first request. The
 * reference page at `/docs` renders it above the endpoints; keep it true to `libs/auth` and the README.
 */
export const API_GUIDE = `Take payments through many payment services with one integration.

## Authentication

Every request but the public ones (health, this document, the secure fields, provider notifications) carries
\`Authorization: Bearer <token>\`, a JWT that the caller signs itself:

- **Key pair.** An API key pair is a P-521 key: \`cli api-keys create --display-name NAME --role SLUG\` (or the
  dashboard) prints \`{id, kid, private_key, …}\` once; the private key is never stored by the service.
- **Token.** An ES512 JWT, header \`{"alg":"ES512","kid":<kid>}\` where \`kid\` is the RFC 7638 thumbprint of the public
  key, claims \`iat\`, \`nbf\`, \`exp\` (30 s of clock skew allowed) and \`scopes\`. A short lifetime is best: the CLI's
  \`token\` signs tokens that live 5 minutes; \`@switchyard/client\` signs and renews them itself.
- **Scopes.** Each operation lists the scopes that reach it (\`Scopes:\` in its description, \`x-required-scopes\` in
  the document; any one of them is enough): \`<resource>.read\` / \`<resource>.write\`, or the wildcards \`*.read\` and
  \`*.write\`. The key's roles must grant them as well: a scope the roles do not grant is a 403 \`forbidden\`.
- **Embed tokens.** Browser and app checkouts use tokens with the \`embed\` scope, minted per checkout by the
  merchant's backend, pinning amount, currency and buyer (\`embed\` claim) and bound to one checkout session.
- **Merchant account.** \`x-service-merchant-account-id\` selects the merchant account of a request (\`default\` when
  absent); a key limited to other accounts gets a 403, a resource of another account is a 404.

Missing or invalid credentials are a 401 \`unauthorized\`; missing permission a 403 \`forbidden\`.

## Errors, retries and pagination

Errors have the body \`{type: "error", code, status, message, details}\`, except validation errors: 422
\`{detail: [{loc, msg, type, input, ctx}]}\`. Each answer carries \`x-request-id\`. Writes that honour
\`Idempotency-Key\` can be retried with the same key; reads can be retried on 5xx and connection errors (every 200 ms,
for up to 1 s). Lists are cursor-paginated: pass \`next_cursor\` back as \`cursor\`.
`;
