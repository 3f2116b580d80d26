import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import { from, lastValueFrom, type Observable } from 'rxjs';
import { RequestTransaction } from '../common/request-transaction';

/** Methods that only read: they answer without a transaction. */
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Records a mutating request's events with its change: opens the request transaction, lets the
 * handler and its services run in it (repositories reach it through DATABASE), writes the events
 * the services recorded (EventRecorder.transaction joins it) in it, and commits. A handler that fails
 * rolls back the change and its events together: never an event for a failed change, never a
 * change without its event. Listeners (webhook and mail dispatch) hear of the events only after
 * the commit, before the answer is sent.
 *
 * Put on the controllers whose whole request is one change
 * (`@UseInterceptors(EventRecordingInterceptor)`). Not global: sign-in and token routes hash
 * passwords or answer reads on the hot path, and memberships and setup need transactions of their
 * own shape (advisory locks); a transaction held across argon2 or an outgoing call would hold a
 * pool connection, and on the embedded database the only connection, for all of that time.
 */
@Injectable()
export class EventRecordingInterceptor implements NestInterceptor {
  constructor(private readonly transaction: RequestTransaction) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const method = context.switchToHttp().getRequest<Request>().method;
    if (READ_METHODS.has(method)) return next.handle();
    return from(this.transaction.run(() => lastValueFrom(next.handle(), { defaultValue: undefined })));
  }
}
