/**
 * What the guard refuses of a bearer token before any key is looked up or any signature checked:
 *
 * - a token longer than {@link MAX_TOKEN_LENGTH}: a signed token of a real key could otherwise carry kilobytes of
 *   claims into every verification and into the verified-token cache (Node's own limit, 16 KiB for all headers,
 *   answers 431 above that);
 * - a header or claims set that repeats a member name, at any depth. RFC 7515 §4 and RFC 7519 §4 let a parser take
 *   the last duplicate or refuse; taking the last means `{"scopes":["x.read"],…,"scopes":["x.write"]}` or a second
 *   `alg`/`kid`/`exp` reads one way here and another way to anything in front of us that reads the first.
 *
 * Everything else about the token (three segments, JSON, ES512, claims) is the verifier's to check.
 */
export const MAX_TOKEN_LENGTH = 8192;

/** Why the token is refused, or null when its shape is acceptable. */
export function tokenShapeProblem(token: string): string | null {
  if (token.length > MAX_TOKEN_LENGTH) return `the bearer token is longer than ${MAX_TOKEN_LENGTH} characters`;
  const [header = '', claims = ''] = token.split('.');
  for (const [part, segment] of [
    ['header', header],
    ['claims', claims],
  ] as const) {
    const repeated = repeatedMemberName(Buffer.from(segment, 'base64url').toString('utf8'));
    if (repeated !== null) return `the token ${part} repeats the member ${JSON.stringify(repeated)}`;
  }
  return null;
}

/**
 * The first member name that one object of a JSON text holds twice (escapes decoded, so `"a"` and `"\u0061"` are
 * the same name), or null. Not a validator: on text that is not JSON it may answer either way.
 */
export function repeatedMemberName(text: string): string | null {
  // One entry per open container: the names seen so far in an object, null for an array.
  const open: (Set<string> | null)[] = [];
  let atName = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    if (char === '"') {
      let end = i + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const names = open.at(-1);
      if (atName && names) {
        let name: unknown;
        try {
          name = JSON.parse(text.slice(i, end + 1));
        } catch {
          return null;
        }
        if (typeof name !== 'string') return null;
        if (names.has(name)) return name;
        names.add(name);
      }
      atName = false;
      i = end;
    } else if (char === '{') {
      open.push(new Set());
      atName = true;
    } else if (char === '[') {
      open.push(null);
      atName = false;
    } else if (char === '}' || char === ']') {
      open.pop();
      atName = false;
    } else if (char === ',') {
      atName = open.at(-1) instanceof Set;
    }
  }
  return null;
}
