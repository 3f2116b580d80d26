import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { DomainError } from '../common/errors';
import { LOGGER } from '../common/logger';
import { EventRecorder } from '../events/event-recorder';
import { SYSTEM_UTILIZER } from '../events/event-types';
import { MembershipRepository } from '../memberships/membership.repository';
import { MembershipProvisioner, type ProvisionedMembership } from '../membership-admin/membership-provisioner';
import type { ProvisionMembershipDto } from '../memberships/membership.dto';
import { SetupToken } from './setup-token';

/** Says where the token comes from, and why one copied from an earlier start no longer works. */
export const SETUP_REJECTED_MESSAGE =
  'The X-Setup-Token header is missing or wrong. The token is SETUP_TOKEN or, when that is unset, the setupToken ' +
  'in the log of the latest start: each start writes a new one and the earlier ones stop working';

@Injectable()
export class SetupService implements OnApplicationBootstrap {
  private readonly token: SetupToken;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly memberships: MembershipRepository,
    private readonly provisioner: MembershipProvisioner,
    private readonly recorder: EventRecorder,
  ) {
    this.token = new SetupToken(config.setupToken);
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.token.isSet || (await this.memberships.anyExists())) return;
    const generated = this.token.generate();
    // Written once, so that an operator with access to the log can set the installation up. Kept
    // in memory only (no secret at rest before the installation has an admin), hence the rule.
    this.logger.warn(
      { setupToken: generated },
      'The installation is not set up. POST /setup with header X-Setup-Token set to this setupToken. ' +
        'It is valid until this process stops: each start without SETUP_TOKEN writes a new one and the earlier ones stop working ' +
        '(set SETUP_TOKEN to keep one token across restarts).',
    );
  }

  isSetUp(): Promise<boolean> {
    return this.memberships.anyExists();
  }

  /** Checked by a guard, before the body is validated: an unauthorized caller learns nothing about it. */
  async authorize(presentedToken: unknown): Promise<void> {
    if (!this.token.isSet && (await this.memberships.anyExists())) {
      throw new DomainError('AlreadySetUp', 'The installation is already set up');
    }
    if (!this.token.matches(presentedToken)) {
      throw new DomainError('SetupRejected', SETUP_REJECTED_MESSAGE);
    }
  }

  async setup(input: ProvisionMembershipDto): Promise<ProvisionedMembership> {
    if (await this.memberships.anyExists()) throw new DomainError('AlreadySetUp', 'The installation is already set up');
    const passwordHash = await this.provisioner.hashPassword(input);
    return this.recorder.transaction(async (record) => {
      await this.memberships.lockInstallation();
      if (await this.memberships.anyExists()) throw new DomainError('AlreadySetUp', 'The installation is already set up');
      return this.provisioner.provision(record, input, passwordHash, { isSystem: true, utilizerId: SYSTEM_UTILIZER });
    });
  }
}
