/**
 * The frame page (`/secure-fields/frame.html`): an empty page and its script, which renders the one input. Nothing
 * from the query is written into the page — the script reads its parameters itself — so the page is the same bytes for
 * every request and has nothing to inject into. Its headers let any merchant frame it (`frame-ancestors *`), run only
 * the service's own script and talk only to the service (`connect-src 'self'`), and keep it out of every cache.
 */
import { ApiError, type ErrorDetail } from '@switchyard/api';
import { z } from 'zod';

export const FRAME_FIELDS = ['number', 'expiry', 'security_code'] as const;
export type FrameField = (typeof FRAME_FIELDS)[number];

const TITLES: Record<FrameField, string> = {
  number: 'Card number',
  expiry: 'Expiry date',
  security_code: 'Security code',
};

/** The frame's query, as documented in the OpenAPI document (checked by `frameQuery`, which answers 400s). */
export const frameQuerySchema = z.object({
  field: z.enum(FRAME_FIELDS).meta({ description: 'Which field the frame holds.' }),
  session: z.uuid().meta({ description: 'The checkout session the card is attached to.' }),
  parent: z
    .string()
    .meta({ description: "The merchant page's origin (`https://shop.example`): the only origin the frame talks to." }),
  channel: z
    .string()
    .regex(/^[A-Za-z0-9_-]{16,64}$/)
    .meta({ description: "The merchant page's random id tying its three frames together." }),
  placeholder: z.string().max(100).optional(),
});

const SESSION = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CHANNEL = /^[A-Za-z0-9_-]{16,64}$/;

function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}

const single = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The field the frame is for, or a 400 naming every parameter that is missing or malformed. */
export function frameQuery(query: unknown): FrameField {
  const record = query !== null && typeof query === 'object' ? (query as Record<string, unknown>) : {};
  const field = single(record.field);
  const problems: ErrorDetail[] = [];
  const problem = (name: string, message: string) =>
    problems.push({ location: 'query', pointer: `/${name}`, message, type: `invalid_${name}` });
  if (!field || !(FRAME_FIELDS as readonly string[]).includes(field))
    problem('field', 'must be number, expiry or security_code');
  if (!SESSION.test(single(record.session) ?? '')) problem('session', 'must be a checkout session id (a UUID)');
  if (!isOrigin(single(record.parent) ?? ''))
    problem('parent', 'must be an http(s) origin: scheme, host and port only');
  if (!CHANNEL.test(single(record.channel) ?? '')) problem('channel', 'must be 16 to 64 letters, digits, _ or -');
  if (record.placeholder !== undefined && (single(record.placeholder) ?? 'x'.repeat(101)).length > 100)
    problem('placeholder', 'must be at most 100 characters');
  if (problems.length > 0)
    throw ApiError.badRequest(
      `The secure fields frame was asked for with bad parameters: ${problems.map((p) => p.pointer.slice(1)).join(', ')}`,
      problems,
    );
  return field as FrameField;
}

export const FRAME_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors *; base-uri 'none'; form-action 'none'";

const STYLE = [
  'html,body{margin:0;padding:0;background:transparent;overflow:hidden}',
  'body{padding:3px;font:16px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}',
  'input{box-sizing:border-box;width:100%;height:40px;margin:0;padding:0 12px;border:1px solid #c4c9d2;border-radius:6px;font:inherit;color:#1a1f36;background:#fff;outline:none}',
  'input:focus{border-color:#3b6ef5;box-shadow:0 0 0 3px rgba(59,110,245,.25)}',
  'input[aria-invalid=true]{border-color:#d92d20}',
].join('');

export const framePage = (field: FrameField): string =>
  [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width,initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    `<title>${TITLES[field]}</title>`,
    `<style>${STYLE}</style>`,
    '<script type="module" src="frame.js"></script>',
    '</head>',
    '<body></body>',
    '</html>',
    '',
  ].join('\n');
