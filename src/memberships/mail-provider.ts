/**
 * Membership field `mail_providers` (contract "Mail providers, mail hooks and the mail queue"):
 * the SMTP servers mail hooks send through. The password is write-only: stored, never answered.
 */
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsIn, IsInt, IsOptional, IsString, Length, Max, MaxLength, Min } from 'class-validator';
import type { StoredMailProvider } from '../database/schema';
import { validationError } from '../common/errors';
import { IsHostOrIpLiteral, IsSlug } from '../common/patterns';
import { normalizeHostName } from '../config/outbound-allow';

export const MAX_MAIL_PROVIDERS = 10;
export const MAIL_PROVIDER_TYPES = ['smtp'] as const;
export const MAIL_TLS_MODES = ['none', 'starttls', 'tls'] as const;
export type MailTlsMode = (typeof MAIL_TLS_MODES)[number];

/** The port each TLS mode uses when none is set: SMTP, submission, submissions. */
export const DEFAULT_SMTP_PORT: Record<MailTlsMode, number> = { none: 25, starttls: 587, tls: 465 };

export type { StoredMailProvider };

/** One entry as answered: the password replaced by whether one is set. */
export interface MailProviderResponse extends Omit<StoredMailProvider, 'password'> {
  has_password: boolean;
}

export class MailProviderDto {
  @ApiProperty({ example: 'relay', description: 'Unique in the list; what a mail hook\'s mail_provider names' })
  @IsDefined({ message: 'is required' })
  @IsString()
  @IsSlug()
  slug!: string;

  @ApiProperty({ example: 'Company relay' })
  @IsDefined({ message: 'is required' })
  @IsString()
  @Length(1, 128)
  name!: string;

  @ApiProperty({ enum: MAIL_PROVIDER_TYPES })
  @IsDefined({ message: 'is required' })
  @IsIn(MAIL_PROVIDER_TYPES, { message: `must be one of ${MAIL_PROVIDER_TYPES.join(', ')}` })
  type!: 'smtp';

  @ApiProperty({
    example: 'smtp.example.com',
    description:
      'Host name (letters, digits, hyphens, dots; IDN as punycode) or IP literal, without port; an internal IP literal or localhost is refused ' +
      '(destination not allowed) unless OUTBOUND_ALLOW permits it',
  })
  @IsDefined({ message: 'is required' })
  @IsString()
  @Length(1, 253)
  @IsHostOrIpLiteral()
  host!: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 65535, description: 'Default 25 / 587 / 465 by tls' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(65535)
  port?: number | null;

  @ApiPropertyOptional({ enum: MAIL_TLS_MODES, default: 'starttls', description: 'none: plain; starttls: STARTTLS required; tls: implicit TLS' })
  @IsOptional()
  @IsIn(MAIL_TLS_MODES, { message: `must be one of ${MAIL_TLS_MODES.join(', ')}` })
  tls?: MailTlsMode;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 256, description: 'SMTP AUTH user; AUTH only when set' })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  username?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 1024,
    description:
      'Write-only. Omitted keeps the stored password of the same slug, unless host, port, tls or username changes (then it must be sent again, or null: else 400); ' +
      'null clears it. Answers carry has_password.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  password?: string | null;
}

export class MailProviderSchema {
  @ApiProperty() slug!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: MAIL_PROVIDER_TYPES }) type!: string;
  @ApiProperty() host!: string;
  @ApiProperty({ type: Number, nullable: true }) port!: number | null;
  @ApiProperty({ enum: MAIL_TLS_MODES }) tls!: string;
  @ApiProperty({ type: String, nullable: true }) username!: string | null;
  @ApiProperty({ description: 'Whether a password is set (the password itself is never returned)' }) has_password!: boolean;
}

/**
 * The list a PUT stores: an entry without `password` keeps the stored one of its slug, as long as
 * it still goes where that password was given for. A stored password is never sent to another
 * server (contract, "Decisions of the third review"): an entry whose host, port, TLS mode or user
 * name changes must send its password again, or null; else 400 naming the field.
 */
export function nextMailProviders(current: readonly StoredMailProvider[], requested: readonly MailProviderDto[]): StoredMailProvider[] {
  const stored = new Map(current.map((provider) => [provider.slug, provider]));
  return requested.map((entry, index) => {
    const next: StoredMailProvider = {
      slug: entry.slug,
      name: entry.name,
      type: entry.type,
      host: entry.host,
      port: entry.port ?? null,
      tls: entry.tls ?? 'starttls',
      username: entry.username ?? null,
      password: entry.password ?? null,
    };
    const before = stored.get(entry.slug);
    if (entry.password !== undefined || !before?.password) return next;
    if (!sameDestination(before, next)) {
      throw validationError(`mail_providers.${index}.password`, 'must be sent again (or null) when host, port, tls or username changes');
    }
    return { ...next, password: before.password };
  });
}

/** Same server, same account: the port compared as it is dialled (an unset port is the TLS mode's default). */
function sameDestination(a: StoredMailProvider, b: StoredMailProvider): boolean {
  const port = (provider: StoredMailProvider): number => provider.port ?? DEFAULT_SMTP_PORT[provider.tls];
  return normalizeHostName(a.host) === normalizeHostName(b.host) && port(a) === port(b) && a.tls === b.tls && a.username === b.username;
}

/** Built field by field: the password has no path into an answer. */
export function toMailProviderResponse(provider: StoredMailProvider): MailProviderResponse {
  return {
    slug: provider.slug,
    name: provider.name,
    type: provider.type,
    host: provider.host,
    port: provider.port,
    tls: provider.tls,
    username: provider.username,
    has_password: provider.password !== null && provider.password !== '',
  };
}

/** Duplicate slugs, by position: the first problem, or undefined. */
export function duplicateSlugProblem(providers: readonly MailProviderDto[]): { index: number; message: string } | undefined {
  const seen = new Set<string>();
  for (const [index, provider] of providers.entries()) {
    if (seen.has(provider.slug)) return { index, message: `slug ${JSON.stringify(provider.slug)} is used twice` };
    seen.add(provider.slug);
  }
  return undefined;
}
