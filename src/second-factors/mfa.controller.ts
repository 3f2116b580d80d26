import { applyDecorators, Body, Delete, HttpCode, Param, Post } from '@nestjs/common';
import { type ApiParamOptions, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentActor, RequirePermission } from '../common/access-decorators';
import { ApiRoute } from '../common/api-route';
import { ReadUserRecordsRoute, UserRecordsController } from '../common/user-records-routes';
import { ApiAuth } from '../common/openapi';
import {
  ConfirmTotpDto,
  CurrentPasswordDto,
  FactorStateSchema,
  PasskeySchema,
  RecoveryCodesSchema,
  RegisterPasskeyDto,
  TotpSecretSchema,
  type FactorState,
} from './mfa.dto';
import { type FactorActor, FRESH_SIGN_IN_SECONDS, MfaService } from './mfa.service';

const SELF_ONLY = 'The user itself, with an unscoped token.';
/** Users who signed up through a provider have no password: a recent sign-in stands for it (MfaService, FRESH_SIGN_IN_SECONDS). */
const NO_PASSWORD = `A user without a password (signed up through a provider) leaves it out and needs a session signed in within the last ${FRESH_SIGN_IN_SECONDS / 60} minutes (else 403 AccessDenied).`;
const PASSWORD_REQUIRED = `${SELF_ONLY} current_password is required (a wrong one: 400 InvalidCurrentPassword, counted as a sign-in failure). ${NO_PASSWORD}`;
const SELF_OR_ADMIN = `The user itself with current_password, or a caller holding users.update.{id} (without current_password). ${NO_PASSWORD}`;
const PASSWORD_EXAMPLE = { self: { summary: 'The user itself', value: { current_password: 'correct horse battery' } } };
/** The removal routes' example is an administrator's (no body); the user itself sends {current_password}. */
const ADMINISTRATOR_EXAMPLE = { administrator: { summary: 'A caller holding users.update.{id}: no current_password', value: {} } };

/** DELETE of one factor: the user itself with current_password, or an administrator without; 204, and UserMfaDisabled. */
function RemoveFactorRoute(path: string, docs: { summary: string; method: 'totp' | 'webauthn'; params?: ApiParamOptions[] }): MethodDecorator {
  return applyDecorators(
    Delete(path),
    HttpCode(204),
    RequirePermission('users.update', { object: 'id' }),
    ApiRoute({
      summary: docs.summary,
      description: `${SELF_OR_ADMIN} Records UserMfaDisabled (method "${docs.method}").`,
      ...(docs.params === undefined ? {} : { params: docs.params }),
      body: { model: CurrentPasswordDto, examples: ADMINISTRATOR_EXAMPLE, required: false },
      answers: [{ status: 204, description: 'Removed' }],
      errors: [400, 403, 404],
    }),
  );
}

@ApiTags('second factors')
@ApiAuth()
@UserRecordsController('mfa')
export class MfaController {
  constructor(private readonly mfa: MfaService) {}

  @ReadUserRecordsRoute({ summary: "A user's second factors (no secret, code or challenge)", type: FactorStateSchema })
  state(@Param('membershipId') membershipId: string, @Param('id') id: string): Promise<FactorState> {
    return this.mfa.state(membershipId, id);
  }

  @Delete()
  @HttpCode(204)
  @RequirePermission('users.update', { object: 'id' })
  @ApiRoute({
    summary: 'Remove every second factor of a user and revoke all its sessions',
    description: 'A caller holding users.update.{id} (not the user on its own record). Revokes every session (reason mfa_reset); records UserMfaDisabled (method "all").',
    answers: [{ status: 204, description: 'Removed' }],
    errors: [403, 404],
  })
  async resetAll(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentActor() actor: FactorActor): Promise<void> {
    await this.mfa.resetAll(actor, membershipId, id);
  }

  @Post('totp')
  @HttpCode(201)
  @Authenticated()
  @ApiRoute({
    summary: 'Start TOTP enrollment: a pending secret and its otpauth:// URI',
    description: `${PASSWORD_REQUIRED} The secret appears only in this answer; it replaces a pending one, and an enabled TOTP keeps working until the new one is confirmed.`,
    body: { model: CurrentPasswordDto, examples: PASSWORD_EXAMPLE },
    answers: [{ status: 201, type: TotpSecretSchema }],
    errors: [400, 403, 404],
  })
  startTotp(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentActor() actor: FactorActor, @Body() body: CurrentPasswordDto): Promise<{ secret: string; otpauth_uri: string }> {
    return this.mfa.startTotp(actor, membershipId, id, body.current_password);
  }

  @Post('totp/confirm')
  @HttpCode(200)
  @Authenticated()
  @ApiRoute({
    summary: 'Confirm TOTP with a code of the pending secret: TOTP enabled, 10 recovery codes',
    description: `${SELF_ONLY} Wrong code: 400 MfaCodeInvalid. The recovery codes appear only in this answer (earlier ones void). Records UserMfaEnabled (method "totp").`,
    body: { model: ConfirmTotpDto, examples: { code: { summary: 'The code the app shows', value: { code: '123456' } } } },
    answers: [{ status: 200, type: RecoveryCodesSchema }],
    errors: [400, 403, 404],
  })
  confirmTotp(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentActor() actor: FactorActor, @Body() body: ConfirmTotpDto): Promise<{ recovery_codes: string[] }> {
    return this.mfa.confirmTotp(actor, membershipId, id, body.code, body.current_password);
  }

  @RemoveFactorRoute('totp', { summary: 'Remove TOTP', method: 'totp' })
  async deleteTotp(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentActor() actor: FactorActor, @Body() body: CurrentPasswordDto): Promise<void> {
    await this.mfa.deleteTotp(actor, membershipId, id, body.current_password);
  }

  @Post('webauthn/options')
  @HttpCode(200)
  @Authenticated()
  @ApiRoute({
    summary: 'Passkey registration options (PublicKeyCredentialCreationOptionsJSON)',
    description: `${PASSWORD_REQUIRED} The challenge (32 random bytes) is single use and lives 300 s; attestation "none".`,
    body: { model: CurrentPasswordDto, examples: PASSWORD_EXAMPLE },
    answers: [{ status: 200, description: 'PublicKeyCredentialCreationOptionsJSON (WebAuthn Level 2)', schema: { type: 'object', additionalProperties: true } }],
    errors: [400, 403, 404],
  })
  passkeyOptions(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentActor() actor: FactorActor, @Body() body: CurrentPasswordDto): Promise<object> {
    return this.mfa.passkeyOptions(actor, membershipId, id, body.current_password);
  }

  @Post('webauthn')
  @HttpCode(201)
  @Authenticated()
  @ApiRoute({
    summary: 'Register a passkey from the response to the registration options',
    description: `${SELF_ONLY} Failed verification: 400 MfaCodeInvalid. Records UserMfaEnabled (method "webauthn").`,
    body: { model: RegisterPasskeyDto, examples: { passkey: { summary: 'navigator.credentials.create() as JSON', value: { name: 'Laptop', response: { id: '…', rawId: '…', type: 'public-key', response: {} } } } } },
    answers: [{ status: 201, type: PasskeySchema }],
    errors: [400, 403, 404],
  })
  registerPasskey(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentActor() actor: FactorActor, @Body() body: RegisterPasskeyDto): Promise<{ _id: string; name: string; created_at: string }> {
    return this.mfa.registerPasskey(actor, membershipId, id, body);
  }

  @RemoveFactorRoute('webauthn/:credentialId', {
    summary: 'Remove a passkey',
    method: 'webauthn',
    params: [{ name: 'credentialId', description: 'The passkey _id from GET .../mfa' }],
  })
  async deletePasskey(@Param('membershipId') membershipId: string, @Param('id') id: string, @Param('credentialId') credentialId: string, @CurrentActor() actor: FactorActor, @Body() body: CurrentPasswordDto): Promise<void> {
    await this.mfa.deletePasskey(actor, membershipId, id, credentialId, body.current_password);
  }

  @Post('recovery-codes')
  @HttpCode(200)
  @Authenticated()
  @ApiRoute({
    summary: '10 new recovery codes; the old ones stop working',
    description: `${PASSWORD_REQUIRED} Needs an enabled factor. The codes appear only in this answer.`,
    body: { model: CurrentPasswordDto, examples: PASSWORD_EXAMPLE },
    answers: [{ status: 200, type: RecoveryCodesSchema }],
    errors: [400, 403, 404],
  })
  regenerateRecoveryCodes(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentActor() actor: FactorActor, @Body() body: CurrentPasswordDto): Promise<{ recovery_codes: string[] }> {
    return this.mfa.regenerateRecoveryCodes(actor, membershipId, id, body.current_password);
  }
}
