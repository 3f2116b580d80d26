import { validationError } from '../errors';

/** Longest `keyword` the roles and applications searches take (400 on `keyword` beyond it). */
export const MAX_SEARCH_KEYWORD_LENGTH = 128;

/**
 * The `keyword` of a roles or applications search, trimmed; anything else is 400 on `keyword`.
 * (The users search keeps its own older wording and does not trim: its answers are the contract's.)
 */
export function parseSearchKeyword(keyword: unknown): string {
  if (typeof keyword !== 'string' || keyword.trim() === '' || keyword.length > MAX_SEARCH_KEYWORD_LENGTH) {
    throw validationError('keyword', `must be a non-empty string of at most ${MAX_SEARCH_KEYWORD_LENGTH} characters`);
  }
  return keyword.trim();
}

/** A LIKE pattern matching the keyword anywhere: `%`, `_` and `\` are LIKE syntax, so a keyword means its own characters. */
export function likePattern(keyword: string): string {
  return `%${keyword.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}
