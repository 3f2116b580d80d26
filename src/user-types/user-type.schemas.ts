import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { NamedResourceSchema, SysSchema } from '../common/api-docs';
import { PROPERTY_TYPES } from './custom-fields';

const SCALAR_SCHEMAS = [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }];
/** A default is a value of the property's type: a scalar, a list or an object. */
const DEFAULT_VALUE_SCHEMAS = [
  ...SCALAR_SCHEMAS,
  { type: 'array', items: { oneOf: SCALAR_SCHEMAS } },
  { type: 'object', additionalProperties: true },
];

/** A property definition as stored and answered (for the API description only). */
export class UserTypePropertySchema {
  @ApiProperty({ enum: PROPERTY_TYPES }) type!: string;
  @ApiProperty() required!: boolean;
  @ApiProperty({ description: 'No other user of the type may hold the same value (not for boolean, object, array)' }) unique!: boolean;
  @ApiPropertyOptional({ oneOf: DEFAULT_VALUE_SCHEMAS, description: 'Applied when a user leaves the field out; must match the type' })
  default?: unknown;
  @ApiPropertyOptional({ type: 'array', items: { oneOf: [{ type: 'string' }, { type: 'number' }] }, description: 'Enum only' })
  values?: (string | number)[];
  @ApiPropertyOptional() description?: string;
}

/** A user type as toUserTypeResponse builds it (for the API description only). */
export class UserTypeSchema extends NamedResourceSchema {
  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/UserTypePropertySchema' } })
  properties!: Record<string, UserTypePropertySchema>;
  @ApiProperty() allow_additional_properties!: boolean;
  @ApiProperty() membership_id!: string;
  @ApiProperty({ type: () => SysSchema }) sys!: SysSchema;
}
