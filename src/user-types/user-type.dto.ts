import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { DocumentedDescriptionField, NameField, NamedBodyDto, OptionalBooleanField, SlugField } from '../common/dto-fields';
import type { FieldError } from '../common/errors';
import { fieldErrorsOf, requireJsonObject, splitBody, validateDto } from '../common/request-body';
import { validationFailure } from '../common/validation';
import { parsePropertyDefinitions, PROPERTY_TYPES, type PropertyDefinitions } from './custom-fields';

class UserTypeOptionsDto {
  @OptionalBooleanField({ default: false, description: 'Whether users of this type may carry fields that `properties` does not define.' })
  allow_additional_properties?: boolean;
}

/** The fixed fields of a user type body; `properties` is validated by parsePropertyDefinitions. */
export class UserTypeFieldsDto extends NamedBodyDto(UserTypeOptionsDto, {
  name: NameField({ example: 'Employee', maxLength: 128 }),
  slug: SlugField({ example: 'employee', description: 'Defaults to the name slugified. Cannot be changed after creation; users name their type by it.' }),
  description: DocumentedDescriptionField(1024),
}) {}

/** The whole body, for the API description. */
export class UserTypeBodyDto extends UserTypeFieldsDto {
  @ApiPropertyOptional({
    description: `Property name to definition: {type: ${PROPERTY_TYPES.join('|')}, required?, unique?, default?, values? (enum only), description?}. Defaults to {}.`,
    example: { department: { type: 'enum', values: ['sales', 'it'], required: true }, employee_no: { type: 'integer', unique: true } },
    type: 'object',
    additionalProperties: true,
  })
  properties?: Record<string, unknown>;
}

export interface UserTypeInput {
  fields: UserTypeFieldsDto;
  properties: PropertyDefinitions;
}

const FIXED_FIELDS: ReadonlySet<string> = new Set(['name', 'slug', 'description', 'allow_additional_properties']);

/** Parses a user type body: fixed fields through the DTO, `properties` through their own validation; all problems in one 400. */
@Injectable()
export class UserTypeBodyPipe implements PipeTransform<unknown, Promise<UserTypeInput>> {
  async transform(value: unknown, _metadata: ArgumentMetadata): Promise<UserTypeInput> {
    const body = requireJsonObject(value);
    const { known, rest } = splitBody(body, FIXED_FIELDS);
    const errors: FieldError[] = [];
    let fields: UserTypeFieldsDto | undefined;
    let properties: PropertyDefinitions | undefined;
    // `properties` is not declared on the DTO, so the DTO reports any other unknown key.
    const { properties: rawProperties, ...others } = rest;
    try {
      fields = await validateDto(UserTypeFieldsDto, { ...known, ...others });
    } catch (error) {
      errors.push(...fieldErrorsOf(error));
    }
    try {
      properties = parsePropertyDefinitions(rawProperties === undefined ? {} : rawProperties);
    } catch (error) {
      errors.push(...fieldErrorsOf(error));
    }
    if (errors.length || !fields || !properties) throw validationFailure(errors);
    return { fields, properties };
  }
}
