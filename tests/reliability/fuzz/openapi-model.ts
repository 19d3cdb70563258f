/**
 * Every operation of the served OpenAPI document, flattened for the fuzzer: method, path template, path and query
 * parameters with their schemas, the JSON body schema (references resolved on the fly), and whether it is public.
 */

/** The subset of JSON Schema (OpenAPI 3.1) the gateway's document uses. */
export interface JsonSchema {
  readonly $ref?: string;
  readonly type?: string | readonly string[];
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly format?: string;
  readonly pattern?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly items?: JsonSchema;
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | JsonSchema;
  readonly oneOf?: readonly JsonSchema[];
  readonly anyOf?: readonly JsonSchema[];
  readonly allOf?: readonly JsonSchema[];
}

export interface Parameter {
  readonly name: string;
  readonly in: 'path' | 'query' | 'header';
  readonly required: boolean;
  readonly schema: JsonSchema;
}

export interface Operation {
  readonly method: string;
  readonly path: string;
  readonly operationId: string;
  readonly public: boolean;
  readonly pathParams: readonly Parameter[];
  readonly queryParams: readonly Parameter[];
  readonly body: JsonSchema | undefined;
}

interface OpenApiDocument {
  readonly paths: Record<
    string,
    Record<
      string,
      {
        operationId: string;
        security?: unknown[];
        parameters?: Parameter[];
        requestBody?: { content: Record<string, { schema: JsonSchema }> };
      }
    >
  >;
  readonly components: { readonly schemas: Record<string, JsonSchema> };
}

export class OpenApiModel {
  readonly operations: readonly Operation[];

  constructor(private readonly document: OpenApiDocument) {
    const operations: Operation[] = [];
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const parameters = op.parameters ?? [];
        operations.push({
          method: method.toUpperCase(),
          path,
          operationId: op.operationId,
          public: Array.isArray(op.security) && op.security.length === 0,
          pathParams: parameters.filter((p) => p.in === 'path'),
          queryParams: parameters.filter((p) => p.in === 'query'),
          body: op.requestBody?.content['application/json']?.schema,
        });
      }
    }
    this.operations = operations;
  }

  /** The schema itself, or the component a `$ref` names. */
  resolve(schema: JsonSchema): JsonSchema {
    if (!schema.$ref) return schema;
    const name = schema.$ref.replace('#/components/schemas/', '');
    const target = this.document.components.schemas[name];
    if (!target) throw new Error(`unknown schema ${schema.$ref}`);
    return this.resolve(target);
  }
}
