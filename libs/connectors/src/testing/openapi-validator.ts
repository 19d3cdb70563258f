/**
 * Validates HTTP traffic against an OpenAPI 3.1 document with a JSON Schema 2020-12 validator (ajv): the operation
 * must exist (path and method), its request body must match the operation's schema (required fields, types, enums,
 * no unknown properties where the document forbids them; `$ref`s resolved inside the document), and answers and
 * webhook bodies must match theirs. Used by the provider fakes: nothing in it is hand-written per field.
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

interface Operation {
  readonly requestBody?: { readonly content?: Record<string, { readonly schema?: unknown }> };
  readonly responses?: Record<string, { readonly content?: Record<string, { readonly schema?: unknown }> }>;
}
interface OpenApiDocument {
  readonly paths?: Record<string, Record<string, Operation>>;
  readonly webhooks?: Record<string, Record<string, Operation>>;
}

export interface MatchedOperation {
  readonly template: string;
  readonly params: Readonly<Record<string, string>>;
}

export class OpenApiValidator {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly routes: readonly {
    readonly template: string;
    readonly pattern: RegExp;
    readonly names: readonly string[];
  }[];

  constructor(
    private readonly document: OpenApiDocument,
    private readonly id: string,
  ) {
    // strict: false — OpenAPI adds its own keywords (`example`, `x-…`, `discriminator`) that are not JSON Schema.
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    this.ajv.addFormat('byte', /^[A-Za-z0-9+/]*={0,2}$/);
    this.ajv.addSchema(document as object, id);
    this.routes = Object.keys(document.paths ?? {}).map((template) => {
      const names: string[] = [];
      const source = template
        .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
        .replace(/\{([^}]+)\}/g, (_, name: string) => (names.push(name), '([^/]+)'));
      return { template, pattern: new RegExp(`^${source}$`), names };
    });
  }

  /** The document's operation for a request path (without the server's base path); undefined when there is none. */
  match(method: string, path: string): MatchedOperation | undefined {
    for (const route of this.routes) {
      const found = route.pattern.exec(path);
      if (!found || !this.document.paths?.[route.template]?.[method.toLowerCase()]) continue;
      return {
        template: route.template,
        params: Object.fromEntries(route.names.map((name, i) => [name, decodeURIComponent(found[i + 1] ?? '')])),
      };
    }
    return undefined;
  }

  /** Problems of a request body for an operation; [] when it is valid. */
  requestErrors(method: string, template: string, body: unknown): string[] {
    const pointer = `#/paths/${pointerToken(template)}/${method.toLowerCase()}/requestBody/content/application~1json/schema`;
    return this.errors(pointer, body);
  }

  /** Problems of a response body for an operation and status; [] when it is valid. */
  responseErrors(method: string, template: string, status: number, body: unknown): string[] {
    const operation = this.document.paths?.[template]?.[method.toLowerCase()];
    const key = operation?.responses?.[String(status)] ? String(status) : 'default';
    if (!operation?.responses?.[key]?.content?.['application/json']?.schema)
      return [`no response schema for ${method} ${template} ${status}`];
    return this.errors(
      `#/paths/${pointerToken(template)}/${method.toLowerCase()}/responses/${key}/content/application~1json/schema`,
      body,
    );
  }

  /** Problems of a webhook body (`webhooks['/AUTHORISATION']` of a webhooks document); [] when it is valid. */
  webhookErrors(name: string, body: unknown): string[] {
    if (!this.document.webhooks?.[name]?.post) return [`no webhook ${name}`];
    return this.errors(`#/webhooks/${pointerToken(name)}/post/requestBody/content/application~1json/schema`, body);
  }

  /** Problems of a value against a named component schema. */
  schemaErrors(schemaName: string, value: unknown): string[] {
    return this.errors(`#/components/schemas/${pointerToken(schemaName)}`, value);
  }

  private errors(pointer: string, value: unknown): string[] {
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${this.id}${pointer}` });
      this.compiled.set(pointer, validate);
    }
    if (validate(value)) return [];
    // Paths, keywords and the schema's own words only: never the value (it may be a card number).
    return (validate.errors ?? []).map(
      (error) =>
        `${error.instancePath || '/'} ${error.message ?? error.keyword}${error.params && 'allowedValues' in error.params ? ` ${JSON.stringify(error.params.allowedValues)}` : ''}${error.params && 'additionalProperty' in error.params ? ` (${String(error.params.additionalProperty)})` : ''}`,
    );
  }
}

/** A JSON pointer token: `~` → `~0`, `/` → `~1`; braces percent-encoded as in a URI fragment. */
const pointerToken = (token: string): string =>
  token.replace(/~/g, '~0').replace(/\//g, '~1').replace(/\{/g, '%7B').replace(/\}/g, '%7D');
