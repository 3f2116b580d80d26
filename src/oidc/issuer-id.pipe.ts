import { Injectable, type PipeTransform } from '@nestjs/common';
import { DomainError } from '../common/errors';
import { isPossibleId } from '../common/ids';

/**
 * The `{m}` of an issuer's route: a value that cannot be a membership id names no issuer, 404
 * MembershipNotFound before any lookup (contract, "Hostile input": a hostile path id answers 400 or
 * 404 on every route). The OAuth routes answer it in OAuth's shape (sendError).
 */
@Injectable()
export class IssuerIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!isPossibleId(value)) throw new DomainError('MembershipNotFound', 'The membership does not exist');
    return value;
  }
}
