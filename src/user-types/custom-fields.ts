import { isEmail } from 'class-validator';
import { DomainError, type FieldError } from '../common/errors';
import { normalizeIsoTimestamp } from '../common/query/iso-timestamp';
import { isSecretKey } from '../events/sanitize';

/*
 * Custom user fields: the property definitions of a user type, and the validation of a user's
 * custom field values against them. Pure: no Nest, no database. Uniqueness needs other users, so
 * validation answers which values must be unique and the caller checks them.
 */

export const PROPERTY_TYPES = ['string', 'integer', 'number', 'boolean', 'date', 'email', 'uri', 'enum', 'object', 'array'] as const;
export type PropertyType = (typeof PROPERTY_TYPES)[number];

/** Types whose values can be compared for `unique` (a boolean, object or array cannot sensibly be unique). */
const UNIQUE_CAPABLE: ReadonlySet<PropertyType> = new Set<PropertyType>(['string', 'integer', 'number', 'date', 'email', 'uri', 'enum']);

export interface PropertyDefinition {
  type: PropertyType;
  required: boolean;
  unique: boolean;
  default?: unknown;
  /** Enum only: the allowed values. */
  values?: (string | number)[];
  description?: string;
}

export type PropertyDefinitions = Record<string, PropertyDefinition>;

export interface CustomFieldSchema {
  /** For messages: the user type's slug. */
  typeSlug: string;
  properties: PropertyDefinitions;
  allowAdditionalProperties: boolean;
}

/** Bounds on definitions and values, so that hostile input is refused before it costs anything. */
export const CUSTOM_FIELD_LIMITS = {
  maxProperties: 100,
  maxDescriptionLength: 1024,
  maxEnumValues: 256,
  /** A `string` value, an enum value, a string anywhere inside an object or array value. */
  maxStringLength: 4096,
  maxEmailLength: 254,
  maxUriLength: 2048,
  /** Keys of objects inside object/array values. */
  maxKeyLength: 128,
  /** Nesting of object/array values (the value itself is level 1). */
  maxDepth: 5,
  /** Keys and elements inside all object/array values of one user together. */
  maxNodes: 1000,
  /** All custom fields of one user, as JSON. */
  maxTotalBytes: 64 * 1024,
} as const;

/** A property name: a letter, then letters, digits or `_`; safe as a JSON key and as a query path segment. */
export const PROPERTY_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/**
 * Names of the user's own fields (and server-managed ones). Custom fields are returned beside
 * them at the top level of a user, so a custom property may not take one of these names.
 */
export const BUILT_IN_USER_FIELDS: readonly string[] = [
  '_id',
  'id',
  'username',
  'firstname',
  'lastname',
  'email_address',
  'password',
  'password_hash',
  'role',
  'user_type',
  'permissions',
  'forbidden',
  'is_active',
  'source_provider',
  'membership_id',
  'sys',
  'custom_fields',
];

const BUILT_IN_LOWER = new Set(BUILT_IN_USER_FIELDS.map((name) => name.toLowerCase()));

/** Names with a meaning to JavaScript objects; body parsing libraries drop or misread them. */
const OBJECT_MACHINERY = new Set(['constructor', 'prototype']);

const DEFINITION_KEYS = new Set(['type', 'required', 'unique', 'default', 'values', 'description']);

/** Why a name cannot be a custom property, or undefined when it can. */
export function propertyNameProblem(name: string): string | undefined {
  if (!PROPERTY_NAME_PATTERN.test(name)) {
    return 'is not a valid property name: a letter, then up to 63 letters, digits or "_"';
  }
  if (BUILT_IN_LOWER.has(name.toLowerCase())) return 'is a built-in user field and cannot be a custom property';
  if (OBJECT_MACHINERY.has(name.toLowerCase())) return 'is reserved and cannot be a custom property';
  // The event log drops secret-looking keys; a custom field by such a name would vanish from events.
  if (isSecretKey(name)) return 'is reserved and cannot be a custom property';
  return undefined;
}

/** A user-supplied name, cut short and quoted, for messages and error fields. */
function shown(name: string): string {
  return name.length > 64 ? `${name.slice(0, 64)}...` : name;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function failure(errors: FieldError[]): DomainError {
  const summary = errors
    .slice(0, 3)
    .map((e) => `${e.field}: ${e.message}`)
    .join('; ');
  return new DomainError('ModelValidationError', summary, errors);
}

/** Counts the nodes of object/array values across one validation. */
class Budget {
  private nodes = 0;
  spend(n: number): boolean {
    this.nodes += n;
    return this.nodes <= CUSTOM_FIELD_LIMITS.maxNodes;
  }
}

/**
 * Checks an arbitrary JSON value (object/array properties, additional properties): bounded in
 * depth, size and string length, and free of `__proto__` keys. Answers a problem or undefined.
 */
function jsonValueProblem(value: unknown, depth: number, budget: Budget): string | undefined {
  if (value === null || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : 'must be a finite number';
  if (typeof value === 'string') {
    return value.length > CUSTOM_FIELD_LIMITS.maxStringLength
      ? `contains a string longer than ${CUSTOM_FIELD_LIMITS.maxStringLength} characters`
      : undefined;
  }
  if (depth > CUSTOM_FIELD_LIMITS.maxDepth) return `is nested more than ${CUSTOM_FIELD_LIMITS.maxDepth} levels deep`;
  const tooLarge = `is too large (more than ${CUSTOM_FIELD_LIMITS.maxNodes} keys and elements in all)`;
  if (Array.isArray(value)) {
    if (!budget.spend(value.length)) return tooLarge;
    for (const item of value) {
      const problem = jsonValueProblem(item, depth + 1, budget);
      if (problem) return problem;
    }
    return undefined;
  }
  if (isPlainObject(value)) {
    const keys = Object.keys(value);
    if (!budget.spend(keys.length)) return tooLarge;
    for (const key of keys) {
      if (key === '__proto__') return 'contains the forbidden key "__proto__"';
      if (key.length > CUSTOM_FIELD_LIMITS.maxKeyLength) {
        return `contains a key longer than ${CUSTOM_FIELD_LIMITS.maxKeyLength} characters`;
      }
      const problem = jsonValueProblem(value[key], depth + 1, budget);
      if (problem) return problem;
    }
    return undefined;
  }
  return 'is not a JSON value';
}

function isHttpUri(value: string): boolean {
  if (/\s/.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
  } catch {
    return false;
  }
}

function describeEnum(values: readonly (string | number)[]): string {
  const listed = values.slice(0, 10).map((v) => JSON.stringify(v));
  return values.length > 10 ? `${listed.join(', ')}, ...` : listed.join(', ');
}

/** Checks one value against its definition. Answers a problem, or undefined when the value is valid. */
function valueProblem(definition: PropertyDefinition, value: unknown, budget: Budget): string | undefined {
  switch (definition.type) {
    case 'string':
      if (typeof value !== 'string') return 'must be a string';
      return value.length > CUSTOM_FIELD_LIMITS.maxStringLength
        ? `must be at most ${CUSTOM_FIELD_LIMITS.maxStringLength} characters`
        : undefined;
    case 'integer':
      return typeof value === 'number' && Number.isSafeInteger(value) ? undefined : 'must be an integer';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'must be a number';
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'date':
      if (typeof value !== 'string' || normalizeIsoTimestamp(value) === undefined) {
        return 'must be an ISO 8601 date ("2026-01-31") or date and time with a zone ("2026-01-31T12:00:00Z")';
      }
      return undefined;
    case 'email':
      if (typeof value !== 'string' || value.length > CUSTOM_FIELD_LIMITS.maxEmailLength || !isEmail(value)) {
        return 'must be an e-mail address';
      }
      return undefined;
    case 'uri':
      if (typeof value !== 'string' || value.length > CUSTOM_FIELD_LIMITS.maxUriLength || !isHttpUri(value)) {
        return `must be an absolute http or https URL of at most ${CUSTOM_FIELD_LIMITS.maxUriLength} characters`;
      }
      return undefined;
    case 'enum': {
      const allowed = definition.values ?? [];
      return (typeof value === 'string' || typeof value === 'number') && allowed.includes(value)
        ? undefined
        : `must be one of ${describeEnum(allowed)}`;
    }
    case 'object':
      if (!isPlainObject(value)) return 'must be a JSON object';
      return jsonValueProblem(value, 1, budget);
    case 'array':
      if (!Array.isArray(value)) return 'must be an array';
      return jsonValueProblem(value, 1, budget);
  }
}

/** The stored form of a valid value: e-mail addresses compare case-insensitively, so they are kept lower case. */
function normalizeValue(definition: PropertyDefinition, value: unknown): unknown {
  if (definition.type === 'email' && typeof value === 'string') return value.toLowerCase();
  return value;
}

// ----- property definitions ---------------------------------------------------------------

function parseEnumValues(raw: unknown, field: string, errors: FieldError[]): (string | number)[] | undefined {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > CUSTOM_FIELD_LIMITS.maxEnumValues) {
    errors.push({ field, message: `must be an array of 1 to ${CUSTOM_FIELD_LIMITS.maxEnumValues} strings or numbers` });
    return undefined;
  }
  const seen = new Set<string | number>();
  for (const item of raw as unknown[]) {
    const valid =
      (typeof item === 'string' && item.length > 0 && item.length <= CUSTOM_FIELD_LIMITS.maxStringLength) ||
      (typeof item === 'number' && Number.isFinite(item));
    if (!valid) {
      errors.push({ field, message: `each value must be a non-empty string of at most ${CUSTOM_FIELD_LIMITS.maxStringLength} characters or a number` });
      return undefined;
    }
    if (seen.has(item)) {
      errors.push({ field, message: `contains ${JSON.stringify(item)} more than once` });
      return undefined;
    }
    seen.add(item);
  }
  return raw as (string | number)[];
}

function parseDefinition(name: string, raw: unknown, errors: FieldError[]): PropertyDefinition | undefined {
  const base = `properties.${shown(name)}`;
  if (!isPlainObject(raw)) {
    errors.push({ field: base, message: 'must be an object such as {"type": "string"}' });
    return undefined;
  }
  const before = errors.length;
  for (const key of Object.keys(raw)) {
    if (!DEFINITION_KEYS.has(key)) {
      errors.push({ field: `${base}.${shown(key)}`, message: 'is not a known property setting (type, required, unique, default, values, description)' });
    }
  }
  const type = raw.type;
  if (typeof type !== 'string' || !(PROPERTY_TYPES as readonly string[]).includes(type)) {
    errors.push({ field: `${base}.type`, message: `must be one of ${PROPERTY_TYPES.join(', ')}` });
    return undefined;
  }
  const definition: PropertyDefinition = { type: type as PropertyType, required: false, unique: false };
  for (const flag of ['required', 'unique'] as const) {
    const value = raw[flag];
    if (value === undefined) continue;
    if (typeof value !== 'boolean') errors.push({ field: `${base}.${flag}`, message: 'must be true or false' });
    else definition[flag] = value;
  }
  if (definition.unique && !UNIQUE_CAPABLE.has(definition.type)) {
    errors.push({ field: `${base}.unique`, message: `is not supported for ${definition.type} properties` });
  }
  if (raw.description !== undefined) {
    if (typeof raw.description !== 'string' || raw.description.length > CUSTOM_FIELD_LIMITS.maxDescriptionLength) {
      errors.push({ field: `${base}.description`, message: `must be a string of at most ${CUSTOM_FIELD_LIMITS.maxDescriptionLength} characters` });
    } else {
      definition.description = raw.description;
    }
  }
  if (definition.type === 'enum') {
    const values = parseEnumValues(raw.values, `${base}.values`, errors);
    if (values) definition.values = values;
  } else if (raw.values !== undefined) {
    errors.push({ field: `${base}.values`, message: 'is only allowed for enum properties' });
  }
  if (errors.length > before) return undefined;

  if (raw.default !== undefined) {
    if (raw.default === null) {
      errors.push({ field: `${base}.default`, message: 'cannot be null; leave it out instead' });
      return undefined;
    }
    if (definition.unique) {
      // Every user left without the value would get the same one and collide with the first.
      errors.push({ field: `${base}.default`, message: 'is not allowed on a unique property' });
      return undefined;
    }
    const problem = valueProblem(definition, raw.default, new Budget());
    if (problem) {
      errors.push({ field: `${base}.default`, message: `does not match the property: ${problem}` });
      return undefined;
    }
    definition.default = normalizeValue(definition, raw.default);
  }
  return definition;
}

/**
 * Validates a user type's `properties` and answers them normalized (`required`/`unique` always
 * present). Throws 400 ModelValidationError listing every problem (fields like `properties.age.type`).
 */
export function parsePropertyDefinitions(input: unknown): PropertyDefinitions {
  if (!isPlainObject(input)) {
    throw failure([{ field: 'properties', message: 'must be an object of property name to definition' }]);
  }
  const names = Object.keys(input);
  if (names.length > CUSTOM_FIELD_LIMITS.maxProperties) {
    throw failure([{ field: 'properties', message: `must have at most ${CUSTOM_FIELD_LIMITS.maxProperties} properties` }]);
  }
  const errors: FieldError[] = [];
  const definitions: PropertyDefinitions = {};
  for (const name of names) {
    const problem = propertyNameProblem(name);
    if (problem) {
      errors.push({ field: `properties.${shown(name)}`, message: problem });
      continue;
    }
    const definition = parseDefinition(name, input[name], errors);
    if (definition) definitions[name] = definition;
  }
  if (errors.length) throw failure(errors);
  return definitions;
}

// ----- values ---------------------------------------------------------------------------------

export interface ValidatedCustomFields {
  /** What to store: valid values, defaults filled in, e-mail addresses lower-cased, nulls left out. */
  values: Record<string, unknown>;
  /** Unique properties that have a value: the caller must check no other user of the type holds it. */
  unique: { name: string; value: unknown }[];
}

/**
 * Validates a user's custom fields against its user type. `schema` null means the user has no
 * type: then there are no custom fields, and every field given is unknown. A null value counts
 * as absent. Defaults fill absent properties. Throws 400 ModelValidationError naming each field.
 */
export function validateCustomFields(input: Readonly<Record<string, unknown>>, schema: CustomFieldSchema | null): ValidatedCustomFields {
  const errors: FieldError[] = [];
  const budget = new Budget();
  const values: Record<string, unknown> = {};
  const unique: ValidatedCustomFields['unique'] = [];
  const properties = schema?.properties ?? {};

  for (const name of Object.keys(input)) {
    const field = shown(name);
    const nameProblem = propertyNameProblem(name);
    if (nameProblem) {
      errors.push({ field, message: name === '__proto__' ? 'is not allowed' : `is not a known field (${nameProblem})` });
      continue;
    }
    const value = input[name];
    if (Object.hasOwn(properties, name)) {
      if (value === null) continue; // absent; required and defaults are handled below
      const definition = properties[name];
      const problem = valueProblem(definition, value, budget);
      if (problem) errors.push({ field, message: problem });
      else values[name] = normalizeValue(definition, value);
      continue;
    }
    if (!schema) {
      errors.push({ field, message: 'is not a known field; custom fields need a user_type that defines them' });
      continue;
    }
    if (!schema.allowAdditionalProperties) {
      errors.push({ field, message: `is not a property of the user type "${shown(schema.typeSlug)}"` });
      continue;
    }
    if (value === null) continue;
    const problem = jsonValueProblem(value, 1, budget);
    if (problem) errors.push({ field, message: problem });
    else values[name] = value;
  }

  for (const [name, definition] of Object.entries(properties)) {
    if (Object.hasOwn(values, name) || errors.some((e) => e.field === name)) continue;
    if (definition.default !== undefined) values[name] = definition.default;
    else if (definition.required) errors.push({ field: name, message: 'is required' }); // see requiredWithoutDefault
  }

  if (!errors.length && JSON.stringify(values).length > CUSTOM_FIELD_LIMITS.maxTotalBytes) {
    errors.push({ field: 'custom_fields', message: `are larger than ${CUSTOM_FIELD_LIMITS.maxTotalBytes} bytes in all` });
  }
  if (errors.length) throw failure(errors);

  for (const [name, definition] of Object.entries(properties)) {
    if (definition.unique && Object.hasOwn(values, name)) unique.push({ name, value: values[name] });
  }
  return { values, unique };
}

/**
 * The required properties that have no default: what a user created without custom fields (a
 * provider's sign-up) would lack, so that `validateCustomFields({}, ...)` would refuse it.
 */
export function requiredWithoutDefault(properties: PropertyDefinitions): string[] {
  return Object.entries(properties)
    .filter(([, definition]) => definition.required && definition.default === undefined)
    .map(([name]) => name);
}

/** Reads stored definitions back (written by parsePropertyDefinitions, so they are trusted). */
export function storedDefinitions(properties: Record<string, unknown>): PropertyDefinitions {
  return properties as PropertyDefinitions;
}
