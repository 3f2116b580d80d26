import type { DeliveryEvent } from '../../../src/webhooks/delivery-request';

/**
 * An event as a webhook delivery takes it (a user's update, with the version before it), for the
 * specs of the delivery request and of one delivery attempt; `overrides` replace whole fields.
 */
export function deliveryEvent(overrides: Partial<DeliveryEvent> = {}): DeliveryEvent {
  return {
    id: 'ev-1',
    membershipId: 'm-1',
    eventType: 'UserUpdated',
    utilizerId: 'u-9',
    document: { _id: 'u-1', username: 'ada', firstname: 'Ada', sys: { created_by: 'u-9' } },
    prior: { _id: 'u-1', username: 'ada', firstname: 'A' },
    eventTime: new Date('2026-03-04T05:06:07.089Z'),
    ...overrides,
  };
}
