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
