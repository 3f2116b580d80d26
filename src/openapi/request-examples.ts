import type { OpenAPIObject } from '@nestjs/swagger';

/** A schema object of the document, as far as the example builder reads it. */
interface SchemaNode {
  $ref?: string;
  type?: string;
  format?: string;
  example?: unknown;
  default?: unknown;
  enum?: unknown[];
  oneOf?: SchemaNode[];
  anyOf?: SchemaNode[];
  allOf?: SchemaNode[];
  properties?: Record<string, SchemaNode>;
  required?: string[];
  items?: SchemaNode;
  minimum?: number;
  minLength?: number;
}

interface MediaTypeNode {
  schema?: SchemaNode;
  example?: unknown;
  examples?: unknown;
}

/** Values for required strings that carry no example of their own, by format. */
const STRING_BY_FORMAT: Record<string, string> = {
  email: 'user@example.com',
  'date-time': '2026-01-01T00:00:00.000Z',
  uri: 'https://example.com',
};

/** Nesting depth at which a self-referencing schema stops producing an example. */
const MAX_DEPTH = 8;

/**
 * Gives every JSON request body of the document an explicit `example`, built from the examples
 * its DTOs declare: Swagger UI prefills "Try it out" with it, and a test sends each one to the
 * service. A body that already has `example` or `examples` (a route that chose its own) keeps it.
 *
 * The example holds the required properties and the optional ones that declare an example;
 * an optional property without one is left out rather than filled with a placeholder the
 * service would reject (a 16-character secret, a slug of an existing role).
 */
export function addRequestBodyExamples(document: OpenAPIObject): void {
  const schemas = (document.components?.schemas ?? {}) as Record<string, SchemaNode>;
  for (const pathItem of Object.values(document.paths)) {
    for (const operation of Object.values(pathItem as Record<string, { requestBody?: { content?: Record<string, MediaTypeNode> } }>)) {
      const media = operation?.requestBody?.content?.['application/json'];
      if (!media?.schema || media.example !== undefined || media.examples !== undefined) continue;
      media.example = exampleOf(media.schema, schemas, 0);
    }
  }
}

/** The example value of one schema: its own example, its default, its first enum value, or one built from its type. */
export function exampleOf(schema: SchemaNode, schemas: Record<string, SchemaNode>, depth: number): unknown {
  if (depth > MAX_DEPTH) return undefined;
  if (schema.$ref) {
    const target = schemas[schema.$ref.replace('#/components/schemas/', '')];
    return target ? exampleOf(target, schemas, depth + 1) : undefined;
  }
  if (schema.example !== undefined) return schema.example;
  if (schema.default !== undefined) return schema.default;
  if (schema.enum?.length) return schema.enum[0];
  const choice = schema.oneOf?.[0] ?? schema.anyOf?.[0];
  if (choice) return exampleOf(choice, schemas, depth + 1);
  if (schema.allOf) {
    return Object.assign({}, ...schema.allOf.map((part) => exampleOf(part, schemas, depth + 1) as object));
  }
  switch (schema.type) {
    case 'string':
      return STRING_BY_FORMAT[schema.format ?? ''] ?? 'x'.repeat(Math.max(schema.minLength ?? 0, 1));
    case 'integer':
    case 'number':
      return schema.minimum ?? 0;
    case 'boolean':
      return true;
    case 'array':
      return schema.items ? [exampleOf(schema.items, schemas, depth + 1)] : [];
    default:
      return objectExample(schema, schemas, depth);
  }
}

function objectExample(schema: SchemaNode, schemas: Record<string, SchemaNode>, depth: number): Record<string, unknown> {
  const required = new Set(schema.required ?? []);
  const example: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (!required.has(name) && !declaresExample(property, schemas)) continue;
    const value = exampleOf(property, schemas, depth + 1);
    if (value !== undefined) example[name] = value;
  }
  return example;
}

/** Whether an optional property has an example of its own (directly or in the schema it refers to). */
function declaresExample(property: SchemaNode, schemas: Record<string, SchemaNode>): boolean {
  if (property.example !== undefined) return true;
  const target = property.$ref ? schemas[property.$ref.replace('#/components/schemas/', '')] : property.allOf?.length === 1 ? property.allOf[0] : undefined;
  if (!target) return false;
  return target.$ref ? declaresExample(target, schemas) : Object.values(target.properties ?? {}).some((inner) => inner.example !== undefined);
}
