import { ApiProperty } from '@nestjs/swagger';
import { IsDefined } from 'class-validator';
import { NamedResourceSchema, SysDto } from '../common/api-docs';
import { DocumentedDescriptionField, DocumentedOptionalIntField, NameField, OptionalBooleanField } from '../common/dto-fields';

export const POLICY_LIMITS = { length: [5, 12], expiresIn: [1, 1800] } as const;

/** Create and replace body; omitted fields take the contract's defaults. The slug follows the name at create and never changes. */
export class TokenCodePolicyBodyDto {
  @NameField({ minLength: 1, maxLength: 128, example: 'TV codes' }) @IsDefined({ message: 'is required' }) name!: string;

  @DocumentedDescriptionField(2000, { example: 'Short digit codes for the TV app' }) description?: string | null;

  @DocumentedOptionalIntField(...POLICY_LIMITS.length, { type: 'integer', default: 8, example: 6 }) length?: number;

  @OptionalBooleanField({ default: true, example: false }) contains_letters?: boolean;
  @OptionalBooleanField({ default: true, example: true }) contains_digits?: boolean;

  @DocumentedOptionalIntField(...POLICY_LIMITS.expiresIn, { type: 'integer', default: 600, description: 'Seconds a code lives', example: 300 })
  expires_in?: number;
}

export class TokenCodePolicyResponseDto extends NamedResourceSchema {
  @ApiProperty() length!: number;
  @ApiProperty() contains_letters!: boolean;
  @ApiProperty() contains_digits!: boolean;
  @ApiProperty() expires_in!: number;
  @ApiProperty() membership_id!: string;
  @ApiProperty({ type: SysDto }) sys!: SysDto;
}
