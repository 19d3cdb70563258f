import secureJsonParse from 'secure-json-parse';

/**
 * The gateway's JSON body parser. An empty body is `{}` (clients send an empty body with a JSON content type for
 * operations whose body is optional); `__proto__` and `constructor.prototype` keys are refused rather than
 * silently dropped; anything unparseable is a 400.
 */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return secureJsonParse.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    throw Object.assign(new SyntaxError('The request body is not valid JSON'), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_JSON_BODY' });
  }
}
