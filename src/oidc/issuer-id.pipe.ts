import { Injectable, type PipeTransform } from '@nestjs/common';
import { DomainError } from '../common/errors';
import { MembershipCache } from '../memberships/membership-cache';

/**
 * The `{m}` of an issuer's route: an issuer exists for every membership and nothing else, so any
 * other value (one that cannot be an id, or names no membership) is 404 MembershipNotFound before
 * the route runs (contract, "Hostile input": a hostile path id answers 400 or 404 on every route).
 * The membership cache answers it without a round trip for a known issuer; the OAuth routes answer
 * it in OAuth's shape (sendError).
 */
@Injectable()
export class IssuerIdPipe implements PipeTransform<string, Promise<string>> {
  constructor(private readonly memberships: MembershipCache) {}

  async transform(value: string): Promise<string> {
    if (!(await this.memberships.get(value))) throw new DomainError('MembershipNotFound', 'The membership does not exist');
    return value;
  }
}
