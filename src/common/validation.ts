import { type ArgumentMetadata, ValidationPipe, type ValidationError } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { DomainError, type FieldError } from './errors';

/**
 * class-validator's type checks. A value of the wrong type fails them and, often, rules that only
 * mean something for the right type ("must be shorter than 64 characters" of a number): only the
 * type's message is answered then, so that the answer does not contradict itself.
 */
const TYPE_CHECKS = new Set(['isString', 'isInt', 'isNumber', 'isBoolean', 'isArray', 'isObject', 'isDateString']);

/** The messages of one field's failed rules: its type's alone when the type is wrong. */
function messagesOf(constraints: Record<string, string>): string[] {
  const typeMessages = Object.entries(constraints).filter(([rule]) => TYPE_CHECKS.has(rule));
  return (typeMessages.length ? typeMessages : Object.entries(constraints)).map(([, message]) => message);
}

function flatten(errors: ValidationError[], parent = ''): FieldError[] {
  const out: FieldError[] = [];
  for (const error of errors) {
    const field = parent ? `${parent}.${error.property}` : error.property;
    for (const message of messagesOf(error.constraints ?? {})) {
      // class-validator prefixes messages with the property name; the field already says it.
      out.push({ field, message: message.startsWith(`${error.property} `) ? message.slice(error.property.length + 1) : message });
    }
    if (error.children?.length) out.push(...flatten(error.children, field));
  }
  return out;
}

/** One 400 ModelValidationError for these field errors, its message naming the first three. */
export function validationFailure(errors: FieldError[]): DomainError {
  const summary = errors
    .slice(0, 3)
    .map((e) => `${e.field}: ${e.message}`)
    .join('; ');
  return new DomainError('ModelValidationError', summary || 'The request is not valid', errors);
}

type ValidationRulesLookup = ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas'];
type ValidationRules = ReturnType<ValidationRulesLookup>;
const rememberedStorages = new WeakSet<object>();

/**
 * class-validator finds a class's rules at every validation by scanning the rules of every
 * decorated class for inheritance (`getTargetValidationMetadatas`): validating refresh's
 * one-field body took 7% of the route's CPU samples, that lookup 1.9 points of them (0.5 with
 * its answers remembered; 8.2 -> 6.1 µs per validation alone). Rules are registered by
 * decorators as classes load, so the answer is remembered per class and options, and forgotten
 * whenever a rule is registered after all (a class loaded later). Same answers, same arrays'
 * contents: class-validator only reads them.
 */
export function rememberValidationRules(storage = getMetadataStorage()): void {
  if (rememberedStorages.has(storage)) return;
  rememberedStorages.add(storage);
  const lookUp: ValidationRulesLookup = storage.getTargetValidationMetadatas.bind(storage);
  const addRule = storage.addValidationMetadata.bind(storage);
  let remembered = new Map<unknown, Map<string, ValidationRules>>();
  storage.addValidationMetadata = (metadata) => {
    remembered = new Map();
    addRule(metadata);
  };
  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    let byOptions = remembered.get(target);
    if (!byOptions) remembered.set(target, (byOptions = new Map<string, ValidationRules>()));
    // Group names are the application's own identifiers, never holding a NUL.
    const key = `${schema}\0${always}\0${strictGroups}\0${groups?.join('\0') ?? ''}`;
    let rules = byOptions.get(key);
    if (!rules) byOptions.set(key, (rules = lookUp(target, schema, always, strictGroups, groups)));
    return rules;
  };
}

/**
 * Keys class-transformer skips without a word, at any depth, where the whitelist would refuse any
 * other key a DTO does not declare (a DTO never declares them). JSON.parse makes `__proto__` an
 * ordinary own key, so it is seen here.
 */
const SILENTLY_DROPPED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor']);

/**
 * An error for each silently dropped key in a parsed JSON value, named by its path. The body
 * budget (json-budget.ts) bounds the walk: at most 1000 keys, 2000 elements and 32 levels.
 */
export function droppedKeyErrors(value: unknown, path = ''): FieldError[] {
  if (typeof value !== 'object' || value === null) return [];
  if (Array.isArray(value)) return value.flatMap((element, index) => droppedKeyErrors(element, path ? `${path}.${index}` : String(index)));
  const errors: FieldError[] = [];
  for (const key of Object.keys(value)) {
    const field = path ? `${path}.${key}` : key;
    if (SILENTLY_DROPPED_KEYS.has(key)) errors.push({ field, message: `property ${key} should not exist` });
    else errors.push(...droppedKeyErrors((value as Record<string, unknown>)[key], field));
  }
  return errors;
}

/** ValidationPipe that first refuses the keys class-transformer would drop from a body unseen. */
class BodyValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && this.toValidate(metadata)) {
      const dropped = droppedKeyErrors(value);
      if (dropped.length) throw validationFailure(dropped);
    }
    return super.transform(value, metadata);
  }
}

/** Global validation: unknown fields are rejected, types are checked, every failure is one 400 body. */
export function createValidationPipe(): ValidationPipe {
  rememberValidationRules();
  return new BodyValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors: ValidationError[]) => validationFailure(flatten(errors)),
  });
}
