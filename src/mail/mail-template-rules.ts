/**
 * What a mail hook's subject and template may hold (contract "Mail providers, mail hooks and the
 * mail queue"): the webhook placeholders, the mail-only context ({{user.<path>}},
 * {{membership.name|slug}}) and the mail-only values, each bound to the event that carries it.
 * Pure functions: each answers a field problem, or undefined when valid.
 */
import type { FieldError } from '../common/errors';
import { findPlaceholders, isKnownPlaceholder, TEMPLATE_MAX_BYTES, TEMPLATE_MAX_PLACEHOLDERS } from '../webhooks/template';

export const MAX_SUBJECT_LENGTH = 998;

/**
 * Values that exist only in memory, on the way to the subject user's message: a hook holding one
 * must write to that user alone (no fixed recipients) and may not put it in the subject.
 */
export const MAIL_ONLY_VALUES = ['reset_token', 'otp', 'activation_token'] as const;

/** The event each mail-only placeholder exists on (lifetimes included: they describe the value). */
const MAIL_ONLY_EVENT: Record<string, string> = {
  reset_token: 'UserPasswordReset',
  reset_token_expires_in: 'UserPasswordReset',
  otp: 'UserPasswordReset',
  otp_expires_in: 'UserPasswordReset',
  activation_token: 'UserCreated',
  activation_token_expires_in: 'UserCreated',
};

const SEGMENT = /^[A-Za-z0-9_-]+$/;
const PLACEHOLDER = /\{\{[^{}]*\}\}/g;

/** True for every expression a mail hook knows: the webhook ones and the mail-only ones. */
export function isKnownMailPlaceholder(expression: string): boolean {
  const trimmed = expression.trim();
  if (isKnownPlaceholder(trimmed)) return true;
  if (trimmed === 'membership.name' || trimmed === 'membership.slug') return true;
  if (Object.hasOwn(MAIL_ONLY_EVENT, trimmed)) return true;
  const [root, ...path] = trimmed.split('.');
  return root === 'user' && path.length > 0 && path.every((segment) => SEGMENT.test(segment));
}

export interface MailTemplateFields {
  event: string;
  mail_subject: string;
  mail_template: string;
  send_to_utilizer: boolean;
  recipients: readonly unknown[];
}

function placeholderProblem(text: string, event: string): string | undefined {
  for (const expression of findPlaceholders(text)) {
    const shown = `{{${expression.slice(0, 64)}}}`;
    if (!isKnownMailPlaceholder(expression)) {
      return `uses the unknown placeholder ${shown}; known: the webhook placeholders, {{user.<field>}}, {{membership.name}}, {{membership.slug}} and the mail-only values`;
    }
    const boundTo = MAIL_ONLY_EVENT[expression];
    if (boundTo !== undefined && boundTo !== event) return `uses ${shown}, which exists only on ${boundTo}`;
  }
  return undefined;
}

function sizeProblem(text: string): string | undefined {
  if (Buffer.byteLength(text, 'utf8') > TEMPLATE_MAX_BYTES) return `must be at most ${TEMPLATE_MAX_BYTES} bytes`;
  if ((text.match(PLACEHOLDER)?.length ?? 0) > TEMPLATE_MAX_PLACEHOLDERS) return `must have at most ${TEMPLATE_MAX_PLACEHOLDERS} placeholders`;
  return undefined;
}

const usesMailOnlyValue = (text: string): string | undefined =>
  findPlaceholders(text).find((expression) => (MAIL_ONLY_VALUES as readonly string[]).includes(expression));

/** Every problem of the subject and template together, named by field. */
export function mailTemplateProblems(fields: MailTemplateFields): FieldError[] {
  const problems: FieldError[] = [];
  if (!fields.send_to_utilizer && fields.recipients.length === 0) {
    problems.push({ field: 'recipients', message: 'must hold at least one address, or send_to_utilizer must be true' });
  }
  if (fields.mail_subject.length > MAX_SUBJECT_LENGTH) {
    problems.push({ field: 'mail_subject', message: `must be at most ${MAX_SUBJECT_LENGTH} characters` });
  } else {
    const secret = usesMailOnlyValue(fields.mail_subject);
    const problem = secret !== undefined ? `must not hold the mail-only value {{${secret}}}` : placeholderProblem(fields.mail_subject, fields.event);
    if (problem) problems.push({ field: 'mail_subject', message: problem });
  }
  const templateProblem = sizeProblem(fields.mail_template) ?? placeholderProblem(fields.mail_template, fields.event);
  if (templateProblem) {
    problems.push({ field: 'mail_template', message: templateProblem });
  } else {
    const secret = usesMailOnlyValue(fields.mail_template);
    if (secret !== undefined && (fields.recipients.length > 0 || !fields.send_to_utilizer)) {
      problems.push({
        field: 'mail_template',
        message: `holds the mail-only value {{${secret}}}, so the hook must write to the subject user alone (send_to_utilizer true, no recipients)`,
      });
    }
  }
  return problems;
}
