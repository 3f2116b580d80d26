import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { RetryLaterError } from '../common/errors';
import { LOGGER } from '../common/logger';
import { toUserResponse } from '../common/user-document';
import { EventRecorder } from '../events/event-recorder';
import { SYSTEM_UTILIZER } from '../events/event-types';
import { DEVICE_CODE_ADDRESS_WINDOW_SECONDS, type SignInAttempt, type SignInAttempts, type SignInLogin } from './sign-in-attempts';
import { clientNetworkOf } from './client-network';
import { type AddressLimit, SignInCounterRepository } from './sign-in-counter.repository';

/** The same answer for every lock, of a user, of an unknown name or of an address: it tells nothing but when to return. */
const locked = (seconds: number): RetryLaterError =>
  new RetryLaterError('TooManySignInAttempts', 'Too many failed sign-in attempts; try again later', seconds);

/** Retry-After of an attempt refused because max_failures attempts of its login are already in flight. */
const IN_FLIGHT_RETRY_SECONDS = 1;

/** The counter of a login: the user, or the unknown name (lower-cased by whoever built the login). */
function loginKeyOf(membershipId: string, login: SignInLogin): string {
  if ('userId' in login) return `login:${membershipId}:${login.userId}`;
  if ('userCodesOf' in login) return `user-codes:${membershipId}:${login.userCodesOf}`;
  return `name:${membershipId}:${login.unknownName.toLowerCase()}`;
}

/** The counters of a client address: of its network, an IPv6 client's /64 (see clientNetworkOf). */
const addressKeyOf = (address: string): string => `address:${clientNetworkOf(address)}`;
const deviceCodesKeyOf = (address: string): string => `device-codes:${clientNetworkOf(address)}`;


/**
 * The sign-in defenses (contract "Sign-in defenses"), behind the SignInAttempts port.
 *
 * `assertOpen` counts the attempt as a failure before the secret is checked: attempts in flight
 * are counted, so 8 parallel wrong passwords against max_failures 3 let exactly 3 reach argon2.
 * `recordFailure` then confirms it (and locks the login when the count has reached the limit);
 * `recordSuccess` clears the login's count. Every step that checks a typed secret therefore calls
 * `assertOpen` first, outside any request transaction (a rollback must not undo a count).
 *
 * A client address counts, over every membership, the attempts its logins let through, each as a
 * failure until it ends otherwise: `recordSuccess`, `recordNeither` and `recordRightSecret` give
 * the place back, so only failures stay counted, and attempts in flight count like failures (else
 * one burst of parallel guesses over many logins would all be checked before the first failed).
 * At SIGN_IN_ADDRESS_MAX_FAILURES within its window it is refused until the window ends.
 */
@Injectable()
export class SignInDefenses implements SignInAttempts {
  private readonly addressLimit: AddressLimit;
  /** DEVICE_CODE_ADDRESS_MAX; 0: no limit. */
  private readonly deviceCodeAddressMax: number;
  /** False only when SIGN_IN_DEFENSES=off (the benchmark's comparison): nothing is counted or refused. */
  private readonly enabled: boolean;
  /**
   * The attempts whose place in the address's count is settled (kept as a failure, or given back):
   * an attempt's right password gives it back at once while the login's count waits for the end of
   * the sign-in, whose success must not give it back a second time.
   */
  private readonly addressSettled = new WeakSet<SignInAttempt>();

  constructor(
    private readonly counters: SignInCounterRepository,
    private readonly recorder: EventRecorder,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.addressLimit = { maxFailures: config.signInAddressMaxFailures, windowSeconds: config.signInAddressWindowSeconds };
    this.enabled = config.signInDefenses;
    this.deviceCodeAddressMax = config.deviceCodeAddressMax;
  }

  async assertOpen({ membershipId, login, address }: SignInAttempt): Promise<void> {
    if (!this.enabled) return;
    const reserved = await this.counters.reserve(membershipId, loginKeyOf(membershipId, login), addressKeyOf(address), this.addressLimit);
    if (!reserved) return;
    if (reserved.addressLockLeft > 0) throw locked(reserved.addressLockLeft);
    if (reserved.loginLockLeft > 0) throw locked(reserved.loginLockLeft);
    // Attempts in flight have used the login's allowance: within a second they have either locked
    // it (the next attempt learns for how long) or succeeded and cleared the count.
    if (reserved.failures > reserved.maxFailures) throw locked(IN_FLIGHT_RETRY_SECONDS);
    // Parallel attempts of other logins took the address's last places first: this one is refused
    // and counts for neither.
    if (reserved.addressFailures > this.addressLimit.maxFailures) {
      await this.counters.release(membershipId, loginKeyOf(membershipId, login), addressKeyOf(address));
      throw locked(reserved.addressWindowLeft);
    }
  }

  async recordFailure(attempt: SignInAttempt): Promise<void> {
    if (!this.enabled) return;
    const { membershipId, login } = attempt;
    // The address counted the attempt as a failure when it was reserved: it stays counted.
    this.addressSettled.add(attempt);
    const lock = await this.counters.recordFailure(membershipId, loginKeyOf(membershipId, login));
    if (!lock || !('userId' in login)) return;
    // Never the name or the address: the log holds who was locked by id only.
    this.logger.info({ membershipId, userId: login.userId, lockLevel: lock.level, lockedUntil: lock.lockedUntil.toISOString() }, 'sign-in locked');
    // Not awaited: the answer to the failure that locked a user must take as long as an unknown
    // name's, which records nothing (else its timing would tell that the user exists).
    if (lock.level === 1) {
      void this.recordFirstLock(membershipId, login.userId, lock.failures, lock.lockedUntil).catch((error: unknown) =>
        this.logger.error({ err: error, membershipId, userId: login.userId }, 'UserSignInLocked could not be recorded'),
      );
    }
  }

  async recordSuccess(attempt: SignInAttempt): Promise<void> {
    if (!this.enabled) return;
    await this.counters.reset(attempt.membershipId, loginKeyOf(attempt.membershipId, attempt.login), this.addressToGiveBack(attempt));
  }

  async recordNeither(attempt: SignInAttempt): Promise<void> {
    if (!this.enabled) return;
    await this.counters.release(attempt.membershipId, loginKeyOf(attempt.membershipId, attempt.login), this.addressToGiveBack(attempt));
  }

  async recordRightSecret(attempt: SignInAttempt): Promise<void> {
    if (!this.enabled) return;
    const addressKey = this.addressToGiveBack(attempt);
    if (addressKey) await this.counters.releaseAddress(addressKey);
  }

  /** The address key whose count gets the attempt's place back, once per attempt; null when it was settled already. */
  private addressToGiveBack(attempt: SignInAttempt): string | null {
    if (this.addressSettled.has(attempt)) return null;
    this.addressSettled.add(attempt);
    return addressKeyOf(attempt.address);
  }

  async countDeviceCodeRequest(address: string): Promise<void> {
    if (!this.enabled || this.deviceCodeAddressMax === 0) return;
    const counted = await this.counters.countRequest(deviceCodesKeyOf(address), DEVICE_CODE_ADDRESS_WINDOW_SECONDS);
    if (counted.count > this.deviceCodeAddressMax) {
      throw new RetryLaterError('TooManyDeviceCodeRequests', 'Too many device codes requested from this address; try again later', counted.windowLeft);
    }
  }

  /** An administrator's unlock, or a password set by reset: the user's counts, locks and doubling start over. */
  async clearUser(membershipId: string, userId: string): Promise<void> {
    await this.counters.clear(membershipId, loginKeyOf(membershipId, { userId }));
    await this.counters.clear(membershipId, loginKeyOf(membershipId, { userCodesOf: userId }));
  }

  /** `UserSignInLocked`, on the first lock since the last success (the doubled ones that follow are not recorded). */
  private async recordFirstLock(membershipId: string, userId: string, failures: number, lockedUntil: Date): Promise<void> {
    const user = await this.counters.findUser(membershipId, userId);
    if (!user) return;
    await this.recorder.record({
      membershipId,
      eventType: 'UserSignInLocked',
      utilizerId: SYSTEM_UTILIZER,
      document: { user: toUserResponse(user), failures, locked_until: lockedUntil.toISOString() },
    });
  }
}
