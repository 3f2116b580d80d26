/**
 * Turns a mail hook and the event that triggered it into the subject, body and recipients of its
 * messages (contract "Mail providers, mail hooks and the mail queue"). Pure functions.
 */
import type { MailRecipient } from '../database/schema';
import { bodyBudget, isKnownPlaceholder, OutputBudget, resolvePlaceholder, renderTextWith, type TemplateContext } from '../webhooks/template';
import { MAX_SUBJECT_LENGTH } from './mail-template-rules';

import type { MailOnlyValues } from '../events/event-recorder';

/** Values that live only in memory, beside the committed event (never stored, logged or answered). */
export type { MailOnlyValues };

export interface MailContext extends TemplateContext {
  membership: { name: string; slug: string };
  /** The event's subject user, when it has one. */
  user: Record<string, unknown> | null;
  values: MailOnlyValues;
}

const SUBJECT_USER_IN_DOCUMENT = new Set(['UserCreated', 'UserUpdated', 'UserPasswordChanged', 'UserPasswordReset']);

const asObject = (value: unknown): Record<string, unknown> | null =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;

/**
 * The subject user: `document` of the user events, `prior` of UserDeleted, `document.user` where
 * present (Token*, TokenCode*); none otherwise.
 */
export function subjectUserOf(eventType: string, document: unknown, prior: unknown): Record<string, unknown> | null {
  if (SUBJECT_USER_IN_DOCUMENT.has(eventType)) return asObject(document);
  if (eventType === 'UserDeleted') return asObject(prior);
  return asObject(asObject(document)?.user);
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character]);
const raw = (value: string): string => value;
// eslint-disable-next-line no-control-regex -- control characters are exactly what a header must not hold
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

function resolveMailPlaceholder(expression: string, ctx: MailContext): string {
  const trimmed = expression.trim();
  if (isKnownPlaceholder(trimmed)) return resolvePlaceholder(trimmed, ctx);
  if (trimmed === 'membership.name') return ctx.membership.name;
  if (trimmed === 'membership.slug') return ctx.membership.slug;
  if (trimmed.startsWith('user.')) return resolvePlaceholder(`document.${trimmed.slice('user.'.length)}`, { ...ctx, document: ctx.user });
  return ctx.values[trimmed as keyof MailOnlyValues] ?? '';
}

/** Subject: values raw, then control characters become a space and the text is cut at 998. */
export function renderSubject(template: string, ctx: MailContext): string {
  const text = renderTextWith(template, (expression) => resolveMailPlaceholder(expression, ctx), raw, new OutputBudget(64 * 1024, 'Subject'));
  return text.replace(CONTROL, ' ').slice(0, MAX_SUBJECT_LENGTH);
}

/** Body: single pass; `html` escapes each value and keeps the template's markup, `text` is raw. */
export function renderMailBody(template: string, format: 'html' | 'text', ctx: MailContext): string {
  return renderTextWith(template, (expression) => resolveMailPlaceholder(expression, ctx), format === 'html' ? escapeHtml : raw, bodyBudget());
}

/** Fixed recipients, then the subject user when asked for and it has an address; each address once. */
export function recipientsOf(recipients: readonly MailRecipient[], sendToUtilizer: boolean, user: Record<string, unknown> | null): MailRecipient[] {
  const all = [...recipients];
  const address = user?.email_address;
  if (sendToUtilizer && typeof address === 'string' && address !== '') {
    const names = [user?.firstname, user?.lastname].filter((part): part is string => typeof part === 'string' && part !== '');
    all.push(names.length ? { display_name: names.join(' '), email_address: address } : { email_address: address });
  }
  const seen = new Set<string>();
  return all.filter((recipient) => {
    const key = recipient.email_address.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
