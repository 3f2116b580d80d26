import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { NamedResourceSchema, SysDto } from '../common/api-docs';
import { DocumentedDescriptionField, NestedObject, OptionalBooleanField } from '../common/dto-fields';
import {
  IsDefined,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Length,
  Max,
  MaxLength,
  Min,
  ValidatorConstraint,
  type ValidatorConstraintInterface,
  type ValidationArguments,
  Validate,
} from 'class-validator';
import {
  bodyProblem,
  eventProblem,
  headersProblems,
  MAX_SECRET_LENGTH,
  methodProblem,
  MAX_TRY_COUNT,
  MIN_SECRET_LENGTH,
  MIN_TRY_COUNT,
  TRIGGER_EVENT_TYPES,
  urlProblem,
  WEBHOOK_METHODS,
  WEBHOOK_STATUSES,
} from './webhook-template-rules';

/**
 * Adapts a rule of webhook-template-rules to class-validator (one message per failure). A missing
 * value is left to @IsDefined / @IsOptional, so it is reported once.
 */
function ruleConstraint(name: string, problem: (value: unknown) => string | undefined) {
  @ValidatorConstraint({ name })
  class RuleConstraint implements ValidatorConstraintInterface {
    validate(value: unknown): boolean {
      return value === undefined || value === null || problem(value) === undefined;
    }
    defaultMessage(args: ValidationArguments): string {
      return problem(args.value) ?? 'is not valid';
    }
  }
  return RuleConstraint;
}

const TriggerEvent = ruleConstraint('webhookEvent', eventProblem);
const HttpMethod = ruleConstraint('webhookMethod', methodProblem);
const UrlTemplate = ruleConstraint('webhookUrl', urlProblem);
const HeadersTemplate = ruleConstraint('webhookHeaders', (value) => headersProblems(value).join('; ') || undefined);
const BodyTemplate = ruleConstraint('webhookBody', bodyProblem);

const upperCase = ({ value }: { value: unknown }): unknown => (typeof value === 'string' ? value.toUpperCase() : value);

export class WebhookRequestDto {
  @ApiProperty({ enum: WEBHOOK_METHODS, example: 'POST', description: 'Case-insensitive; stored upper case' })
  @IsDefined({ message: 'is required' })
  @Transform(upperCase)
  @Validate(HttpMethod)
  method!: string;

  @ApiProperty({
    example: 'https://receiver.example.com/hook?event={{event_type}}&user={{document._id}}',
    description: 'Absolute http(s) URL; placeholders in double braces, values URL-encoded. A host that is an internal IP literal or localhost is refused (destination not allowed) unless OUTBOUND_ALLOW permits it; host names are checked when called',
  })
  @IsDefined({ message: 'is required' })
  @Validate(UrlTemplate)
  url!: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { 'X-Event': '{{event_type}}' },
    description: 'Header name to value; values may hold placeholders; a value that would contain a line break is not sent',
  })
  @IsOptional()
  @Validate(HeadersTemplate)
  headers?: Record<string, string>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { user: '{{document.username}}' },
    description: 'JSON object; string values may hold placeholders, each stays inside its string',
  })
  @IsOptional()
  @Validate(BodyTemplate)
  body?: Record<string, unknown>;

  @OptionalBooleanField({
    default: false,
    description: 'false: the body is {document, prior, payload}; true: the configured body alone',
  })
  uncoveredBody?: boolean;
}

/** Create and replace (PUT) take the same body. */
export class WebhookBodyDto {
  @ApiProperty({ example: 'Notify CRM' })
  @IsDefined({ message: 'is required' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name!: string;

  @DocumentedDescriptionField(2000, { example: 'Tells the CRM about new users' })
  description?: string | null;

  @ApiProperty({ enum: TRIGGER_EVENT_TYPES, example: 'UserCreated' })
  @IsDefined({ message: 'is required' })
  @Validate(TriggerEvent)
  event!: string;

  @ApiProperty({ enum: WEBHOOK_STATUSES, example: 'passive', description: 'passive webhooks are kept but never called' })
  @IsDefined({ message: 'is required' })
  @IsIn(WEBHOOK_STATUSES, { message: `must be one of ${WEBHOOK_STATUSES.join(', ')}` })
  status!: 'active' | 'passive';

  @ApiProperty({ type: 'integer', minimum: MIN_TRY_COUNT, maximum: MAX_TRY_COUNT, example: 3, description: 'total attempts for a failing call' })
  @IsDefined({ message: 'is required' })
  @IsInt()
  @Min(MIN_TRY_COUNT)
  @Max(MAX_TRY_COUNT)
  try_count!: number;

  @ApiProperty({ type: WebhookRequestDto })
  @IsDefined({ message: 'is required' })
  @NestedObject(WebhookRequestDto)
  request!: WebhookRequestDto;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    minLength: MIN_SECRET_LENGTH,
    maxLength: MAX_SECRET_LENGTH,
    description:
      'Write-only HMAC key: each call carries X-Webhook-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">. ' +
      'Never returned. On replace: omitted keeps the current secret, null removes it.',
  })
  @IsOptional()
  @IsString()
  @Length(MIN_SECRET_LENGTH, MAX_SECRET_LENGTH)
  secret?: string | null;
}

export class WebhookRequestResponseDto {
  @ApiProperty({ enum: WEBHOOK_METHODS }) method!: string;
  @ApiProperty() url!: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } }) headers!: Record<string, string>;
  @ApiProperty({ type: 'object', nullable: true, additionalProperties: true }) body!: Record<string, unknown> | null;
  @ApiProperty() uncoveredBody!: boolean;
}

export class WebhookResponseDto extends NamedResourceSchema {
  @ApiProperty({ enum: TRIGGER_EVENT_TYPES }) event!: string;
  @ApiProperty({ enum: WEBHOOK_STATUSES }) status!: string;
  @ApiProperty() try_count!: number;
  @ApiProperty({ type: WebhookRequestResponseDto }) request!: WebhookRequestResponseDto;
  @ApiProperty({ description: 'Whether a signing secret is set (the secret itself is never returned)' }) has_secret!: boolean;
  @ApiProperty() membership_id!: string;
  @ApiProperty({ type: SysDto }) sys!: SysDto;
}
