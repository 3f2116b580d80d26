import 'reflect-metadata';
import { IsInt, IsOptional, IsString, MaxLength, getMetadataStorage } from 'class-validator';
import { DomainError } from './errors';
import { createValidationPipe, rememberValidationRules } from './validation';

class Named {
  @IsString() @MaxLength(5) name!: string;
}

class Counted extends Named {
  @IsOptional() @IsInt() count?: number;
}

class Later {
  @IsInt() id!: number;
  label?: string;
}

const storage = getMetadataStorage();
const rulesOf = (target: new () => object) =>
  storage.getTargetValidationMetadatas(target, '', false, false, undefined).map((rule) => `${rule.propertyName}:${rule.name ?? rule.type}`);

describe('rememberValidationRules', () => {
  const before = { named: rulesOf(Named), counted: rulesOf(Counted) };

  beforeAll(() => rememberValidationRules());

  it('answers what class-validator answers, inherited rules included, and the same again', () => {
    expect(rulesOf(Named)).toEqual(before.named);
    expect(rulesOf(Counted)).toEqual(before.counted);
    expect(before.counted).toEqual(expect.arrayContaining(['name:isString', 'name:maxLength', 'count:isInt']));
    expect(storage.getTargetValidationMetadatas(Counted, '', false, false, undefined)).toBe(
      storage.getTargetValidationMetadatas(Counted, '', false, false, undefined),
    );
  });

  it('sees a rule registered after its first answer (a class loaded later)', () => {
    expect(rulesOf(Later)).toEqual(['id:isInt']);
    IsString()(Later.prototype, 'label');
    expect(rulesOf(Later)).toEqual(['id:isInt', 'label:isString']);
    class LaterStill extends Counted {
      @IsString() note!: string;
    }
    expect(rulesOf(LaterStill)).toEqual(expect.arrayContaining(['note:isString', 'count:isInt', 'name:isString']));
  });

  it('keeps apart answers for other options (groups)', () => {
    const grouped = storage.getTargetValidationMetadatas(Named, '', false, false, ['admin']);
    expect(grouped).toEqual([]);
    expect(rulesOf(Named)).toEqual(before.named);
  });

  it('is installed once, however many pipes are made', async () => {
    const lookup = storage.getTargetValidationMetadatas;
    createValidationPipe();
    expect(storage.getTargetValidationMetadatas).toBe(lookup);
    const pipe = createValidationPipe();
    const metadata = { type: 'body' as const, metatype: Counted, data: undefined };
    await expect(pipe.transform({ name: 'ada', count: 2 }, metadata)).resolves.toBeInstanceOf(Counted);
    await expect(pipe.transform({ name: 'ada', extra: 1 }, metadata)).rejects.toBeInstanceOf(DomainError);
    await expect(pipe.transform({ name: 'too long' }, metadata)).rejects.toBeInstanceOf(DomainError);
  });
});

describe('the validation answer', () => {
  const pipe = createValidationPipe();
  const metadata = { type: 'body' as const, metatype: Named, data: undefined };
  const errorsOf = async (body: unknown) => {
    try {
      await pipe.transform(body, metadata);
    } catch (error) {
      return (error as DomainError).errors;
    }
    throw new Error('validated');
  };

  it("names only the type when a value's type is wrong, so that it never contradicts itself", async () => {
    expect(await errorsOf({ name: 123456 })).toEqual([{ field: 'name', message: 'must be a string' }]);
    expect(await errorsOf({ name: 'too long' })).toEqual([{ field: 'name', message: 'must be shorter than or equal to 5 characters' }]);
  });

  it('refuses __proto__ and constructor keys wherever they are, named by their path', async () => {
    expect(await errorsOf(JSON.parse('{"name":"ada","__proto__":{"x":1},"list":[{"constructor":1}]}'))).toEqual([
      { field: '__proto__', message: 'property __proto__ should not exist' },
      { field: 'list.0.constructor', message: 'property constructor should not exist' },
    ]);
  });
});
