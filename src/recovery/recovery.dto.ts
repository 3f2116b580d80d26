import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsString, Length, MaxLength } from 'class-validator';
import { Omittable } from '../common/dto-fields';
import { MAX_TOKEN_LENGTH } from '../tokens/jwt-codec';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../users/password-hasher';

/** Who asks: exactly one of the two (checked by the service, which names the field); null is neither. */
export class ResetLoginDto {
  @ApiPropertyOptional({ example: 'ada@example.com', description: 'Exactly one of email_address and username' })
  @Omittable()
  @IsEmail()
  @MaxLength(254)
  email_address?: string;

  @ApiPropertyOptional({ example: 'ada', description: 'Exactly one of email_address and username' })
  @Omittable()
  @IsString()
  @Length(1, 128)
  username?: string;
}

export class ResetRequestDto extends ResetLoginDto {}

export class VerifyOtpDto extends ResetLoginDto {
  @ApiProperty({ example: '01J9Z8Q4M3XK7V2N5B6C8D0E1F' })
  @IsString()
  @Length(1, 64)
  membership_id!: string;

  @ApiProperty({ example: '482913', description: 'As mailed; any case, spaces and dashes ignored' })
  @IsString()
  @Length(1, 64)
  otp!: string;
}

export class SetPasswordDto {
  @ApiProperty({ example: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ0eXAiOiJyZXNldCJ9.c2lnbmF0dXJl', description: 'The reset token from the mail or from /verify-otp' })
  @IsString()
  @Length(1, MAX_TOKEN_LENGTH)
  reset_token!: string;

  @ApiProperty({ minLength: MIN_PASSWORD_LENGTH, maxLength: MAX_PASSWORD_LENGTH, format: 'password', example: 'a new long password' })
  @IsString()
  @Length(MIN_PASSWORD_LENGTH, MAX_PASSWORD_LENGTH)
  password!: string;
}

export class ActivateDto {
  @ApiProperty({ example: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ0eXAiOiJhY3RpdmF0aW9uIn0.c2lnbmF0dXJl', description: 'The activation token from the mail' })
  @IsString()
  @Length(1, MAX_TOKEN_LENGTH)
  activation_token!: string;
}

export class ResetAnswerSchema {
  @ApiProperty({ example: 'If the account exists, a message has been sent' }) message!: string;
}

export class VerifyOtpAnswerSchema {
  @ApiProperty({ description: 'A reset token for set-password; the mailed one stops working' }) reset_token!: string;
  @ApiProperty({ example: 3600 }) expires_in!: number;
}
