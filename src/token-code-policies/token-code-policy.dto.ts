import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsDefined, IsInt, IsOptional, IsString, Length, Max, MaxLength, Min } from 'class-validator';

export const POLICY_LIMITS = { length: [5, 12], expiresIn: [1, 1800] } as const;

/** Create and replace body; omitted fields take the contract's defaults. The slug follows the name at create and never changes. */
export class TokenCodePolicyBodyDto {
  @ApiProperty({ minLength: 1, maxLength: 128, example: 'TV codes' })
  @IsDefined({ message: 'is required' }) @IsString() @Length(1, 128) name!: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 2000, example: 'Short digit codes for the TV app' })
  @IsOptional() @IsString() @MaxLength(2000) description?: string | null;

  @ApiPropertyOptional({ type: 'integer', minimum: 5, maximum: 12, default: 8, example: 6 })
  @IsOptional() @IsInt() @Min(POLICY_LIMITS.length[0]) @Max(POLICY_LIMITS.length[1]) length?: number;

  @ApiPropertyOptional({ default: true, example: false }) @IsOptional() @IsBoolean() contains_letters?: boolean;
  @ApiPropertyOptional({ default: true, example: true }) @IsOptional() @IsBoolean() contains_digits?: boolean;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1800, default: 600, description: 'Seconds a code lives', example: 300 })
  @IsOptional() @IsInt() @Min(POLICY_LIMITS.expiresIn[0]) @Max(POLICY_LIMITS.expiresIn[1]) expires_in?: number;
}

class SysDto {
  @ApiProperty() created_at!: string;
  @ApiProperty() created_by!: string;
  @ApiPropertyOptional() modified_at?: string;
  @ApiPropertyOptional() modified_by?: string;
}

export class TokenCodePolicyResponseDto {
  @ApiProperty() _id!: string;
  @ApiProperty() name!: string;
  @ApiProperty() slug!: string;
  @ApiProperty({ nullable: true, type: String }) description!: string | null;
  @ApiProperty() length!: number;
  @ApiProperty() contains_letters!: boolean;
  @ApiProperty() contains_digits!: boolean;
  @ApiProperty() expires_in!: number;
  @ApiProperty() membership_id!: string;
  @ApiProperty({ type: SysDto }) sys!: SysDto;
}
