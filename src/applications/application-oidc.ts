import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { validationError } from '../common/errors';
import type { ApplicationOidcRecord } from '../database/schema';
import { OptionalBooleanField } from '../common/dto-fields';

/** The grants an application may use at its issuer's token endpoint (contract "Single sign-on"). */
export const OIDC_GRANT_TYPES = ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code'] as const;
export type OidcGrantType = (typeof OIDC_GRANT_TYPES)[number];
const DEFAULT_GRANT_TYPES: OidcGrantType[] = ['authorization_code', 'refresh_token'];
/** Grants that sign a user in, which a refresh token continues. */
const USER_GRANTS: ReadonlySet<string> = new Set(['authorization_code', 'urn:ietf:params:oauth:grant-type:device_code']);
const MAX_URI_LENGTH = 2048;
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

/** An application as an OpenID Connect client, as stored and answered. */
export type ApplicationOidc = ApplicationOidcRecord;

/** The `oidc` block of POST and PUT .../applications: the application as a client of its membership's OpenID Provider. */
export class ApplicationOidcDto {
  @ApiProperty({
    type: [String],
    minItems: 1,
    maxItems: 10,
    example: ['https://app.example.com/callback'],
    description: 'Where the authorization answers may go, matched exactly: absolute URLs without fragment or credentials, https (http only for localhost, 127.0.0.1 and [::1])',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(10)
  @IsString({ each: true })
  @MaxLength(MAX_URI_LENGTH, { each: true })
  redirect_uris!: string[];

  @ApiPropertyOptional({ type: [String], maxItems: 10, example: ['https://app.example.com/'], description: 'Where RP-initiated logout may return, matched exactly; same rules. Default []' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(10)
  @IsString({ each: true })
  @MaxLength(MAX_URI_LENGTH, { each: true })
  post_logout_redirect_uris?: string[];

  @ApiPropertyOptional({
    type: [String],
    enum: OIDC_GRANT_TYPES,
    example: DEFAULT_GRANT_TYPES,
    description: 'Grants the client may use; default authorization_code and refresh_token. refresh_token needs a grant that signs a user in; client_credentials needs a confidential client',
  })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayUnique()
  @IsIn(OIDC_GRANT_TYPES, { each: true })
  grant_types?: OidcGrantType[];

  @OptionalBooleanField({ default: false, description: 'A client that cannot keep a secret (a browser or native app): no client authentication, PKCE as always' })
  public?: boolean;

  @OptionalBooleanField({ default: true, description: 'Ask the user for consent; false for first-party applications' })
  require_consent?: boolean;
}

/** Why `value` cannot be a redirect URI, or undefined when it can. */
function redirectUriProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (value.includes('#')) return 'must not have a fragment';
  if (url.username || url.password) return 'must not carry credentials';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return undefined;
  return 'must be https, or http for localhost, 127.0.0.1 or [::1]';
}

function checkedUris(field: string, uris: readonly string[]): string[] {
  uris.forEach((uri, index) => {
    const problem = redirectUriProblem(uri);
    if (problem) throw validationError(`${field}.${index}`, problem);
  });
  return [...uris];
}

/** The block as stored: defaults filled in, every rule of the contract checked (400 ModelValidationError naming the field). */
export function toApplicationOidc(input: ApplicationOidcDto | null | undefined): ApplicationOidc | null {
  if (input === null || input === undefined) return null;
  const grantTypes = input.grant_types ?? DEFAULT_GRANT_TYPES;
  const isPublic = input.public ?? false;
  if (grantTypes.includes('refresh_token') && !grantTypes.some((grant) => USER_GRANTS.has(grant))) {
    throw validationError('oidc.grant_types', 'refresh_token needs authorization_code or the device code grant');
  }
  if (isPublic && grantTypes.includes('client_credentials')) {
    throw validationError('oidc.grant_types', 'client_credentials needs a confidential client (public: false)');
  }
  return {
    redirect_uris: checkedUris('oidc.redirect_uris', input.redirect_uris),
    post_logout_redirect_uris: checkedUris('oidc.post_logout_redirect_uris', input.post_logout_redirect_uris ?? []),
    grant_types: [...grantTypes],
    public: isPublic,
    require_consent: input.require_consent ?? true,
  };
}
