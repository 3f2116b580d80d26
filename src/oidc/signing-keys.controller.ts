import { Controller, Param } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Caller } from '../common/caller';
import { CurrentCaller } from '../common/access-decorators';
import { ActionRoute } from '../common/crud/crud-routes';
import { ApiAuth } from '../common/openapi';
import { RotatedKeyDto } from './management.dto';
import { type RotatedKey, SigningKeys } from './signing-keys';

/** The membership's OpenID Provider signing keys (docs/oidc.md, "Keys"); the JWKS itself is public, at the issuer. */
@ApiTags('memberships')
@ApiAuth()
@Controller('memberships/:membershipId/signing-keys')
export class SigningKeysController {
  constructor(private readonly keys: SigningKeys) {}

  @ActionRoute({
    path: 'rotate',
    object: 'membershipId',
    permission: 'memberships.update',
    summary: "Rotate the membership's OpenID Provider signing key (ES256)",
    description:
      'Makes a new current key; the replaced key stays in the JWKS for twice the longest token lifetime, so tokens it signed still verify. Records SigningKeyRotated with both kids. No private key is ever answered.',
    answer: RotatedKeyDto,
  })
  rotate(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string): Promise<RotatedKey> {
    return this.keys.rotate(membershipId, caller.id);
  }
}
