import { Inject, Injectable } from '@nestjs/common';
import { isPossibleId } from '../common/ids';
import { RowCache } from '../common/read-through-cache';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { MembershipRow } from '../database/schema';
import { MembershipRepository } from './membership.repository';

/** Memberships are cached per instance for as long as the specification allows. */
@Injectable()
export class MembershipCache extends RowCache<MembershipRow> {
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly memberships: MembershipRepository,
  ) {
    super(config);
  }

  /** The membership, or undefined; an id that cannot exist is answered without a lookup and never cached. */
  async get(id: string): Promise<MembershipRow | undefined> {
    if (!isPossibleId(id)) return undefined;
    return this.read(id, () => this.memberships.findById(id));
  }

  invalidate(id: string): void {
    this.forgetKey(id);
  }
}
