/**
 * The request parameters the official `stripe` package declares, read from its own TypeScript declarations with
 * the TypeScript compiler API (never a hand-written list): for a params interface (e.g. `PaymentIntentCreateParams`)
 * every form key it allows, as a path (`payment_method_options[card][request_multicapture]` →
 * `payment_method_options.card.request_multicapture`, array items as `[]`, free-form maps such as `metadata` as
 * `*`), and for string-literal unions the values allowed.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export interface DeclaredParameters {
  /** Path → the literal values allowed, or null for any value of the declared type. */
  readonly paths: ReadonlyMap<string, readonly string[] | null>;
}

const cache = new Map<string, DeclaredParameters>();
let program: { checker: ts.TypeChecker; files: readonly ts.SourceFile[] } | undefined;

function stripeProgram(): { checker: ts.TypeChecker; files: readonly ts.SourceFile[] } {
  if (program) return program;
  // The package's main entry is cjs/stripe.cjs.node.js; its resources' declarations sit beside it.
  const resources = path.join(path.dirname(require.resolve('stripe')), 'resources');
  // The resources the connector calls; their imports (shared types) come along.
  const names = ['PaymentIntents.d.ts', 'PaymentMethods.d.ts', 'Refunds.d.ts']
    .map((name) => path.join(resources, name))
    .filter((name) => fs.existsSync(name));
  const created = ts.createProgram(names, { noEmit: true, skipLibCheck: true, types: [] });
  program = {
    checker: created.getTypeChecker(),
    files: names.map((name) => created.getSourceFile(name)).filter((file): file is ts.SourceFile => file !== undefined),
  };
  return program;
}

/** The parameters of `interfaceName` (exported from one of stripe's resource declarations). */
export function declaredParameters(interfaceName: string): DeclaredParameters {
  const cached = cache.get(interfaceName);
  if (cached) return cached;
  const { checker, files } = stripeProgram();
  let declaration: ts.InterfaceDeclaration | undefined;
  for (const file of files) {
    declaration = file.statements.find(
      (s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === interfaceName,
    );
    if (declaration) break;
  }
  if (!declaration) throw new Error(`stripe declares no ${interfaceName}`);
  const paths = new Map<string, readonly string[] | null>();
  walk(checker, checker.getTypeAtLocation(declaration), '', paths, 0);
  const result = { paths };
  cache.set(interfaceName, result);
  return result;
}

function walk(
  checker: ts.TypeChecker,
  type: ts.Type,
  prefix: string,
  paths: Map<string, readonly string[] | null>,
  depth: number,
): void {
  if (depth > 8) return;
  const parts = type.isUnion() ? type.types : [type];
  const literals = parts.filter((t): t is ts.StringLiteralType => t.isStringLiteral()).map((t) => t.value);
  const objects = parts.filter((t) => t.flags & ts.TypeFlags.Object);
  const scalar = parts.some(
    (t) =>
      t.flags &
      (ts.TypeFlags.String |
        ts.TypeFlags.Number |
        ts.TypeFlags.Boolean |
        ts.TypeFlags.BooleanLiteral |
        ts.TypeFlags.NumberLiteral),
  );
  if (prefix !== '' && (literals.length > 0 || scalar)) {
    const before = paths.get(prefix);
    paths.set(prefix, scalar || before === null ? null : [...(before ?? []), ...literals]);
  }
  for (const object of objects) {
    if (checker.isArrayType(object)) {
      const [element] = checker.getTypeArguments(object as ts.TypeReference);
      if (element) walk(checker, element, `${prefix}[]`, paths, depth + 1);
      continue;
    }
    const index = checker.getIndexTypeOfType(object, ts.IndexKind.String);
    if (index) paths.set(prefix === '' ? '*' : `${prefix}.*`, null);
    for (const property of object.getProperties()) {
      const declaration = property.valueDeclaration ?? property.declarations?.[0];
      if (!declaration) continue;
      const propertyType = checker.getNonNullableType(checker.getTypeOfSymbolAtLocation(property, declaration));
      walk(checker, propertyType, prefix === '' ? property.name : `${prefix}.${property.name}`, paths, depth + 1);
    }
  }
}

/** `a[b][0][c]=v` form keys as the declared paths they must match: `a.b.[].c`. */
export function formPath(key: string): string {
  const [head = '', ...rest] = key.split('[');
  return [head, ...rest.map((part) => part.replace(/\]$/, '')).map((part) => (/^\d*$/.test(part) ? '[]' : part))]
    .join('.')
    .replace(/\.\[\]/g, '[]');
}

/** Problems of a form-encoded (or query) request against the declared parameters; [] when every key is declared. */
export function parameterErrors(parameters: DeclaredParameters, form: URLSearchParams): string[] {
  const problems: string[] = [];
  for (const [key, value] of form) {
    const declared = formPath(key);
    const wildcard = declared.replace(/\.[^.[\]]+$/, '.*');
    const allowed = parameters.paths.has(declared)
      ? parameters.paths.get(declared)
      : parameters.paths.has(wildcard)
        ? null
        : undefined;
    if (allowed === undefined) problems.push(`${key} is not a declared parameter`);
    else if (allowed && allowed.length > 0 && !allowed.includes(value))
      problems.push(`${key} must be one of ${allowed.join(', ')}`);
  }
  return problems;
}
