// A date (UTC midnight), or a date and time with a zone designator: a time without a zone would
// be read in the server's zone, so it is refused rather than guessed.
const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?))?$/;

const MAX_LENGTH = 40;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * Validates an ISO 8601 timestamp and rewrites it in the one form both PostgreSQL and PGlite
 * read the same way (`2026-01-01T00:00:00.123456+00:00`), or answers undefined.
 * Digits past microseconds (PostgreSQL's precision) are cut, not rounded.
 */
export function normalizeIsoTimestamp(text: string): string | undefined {
  if (text.length > MAX_LENGTH) return undefined;
  const m = ISO_8601.exec(text);
  if (!m) return undefined;
  const [, year, month, day, hour, minute, second, fraction, zulu, sign, offsetHours, offsetMinutes] = m;

  const y = Number(year);
  const mo = Number(month);
  const d = Number(day);
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return undefined;
  if (hour === undefined) return `${year}-${month}-${day}T00:00:00+00:00`;
  // A time was given, so the regex guarantees a zone designator is present.
  if (zulu === undefined && sign === undefined) return undefined;

  const sec = second ?? '00';
  if (Number(hour) > 23 || Number(minute) > 59 || Number(sec) > 59) return undefined;
  const frac = fraction === undefined ? '' : `.${fraction.slice(0, 6)}`;

  let zone = '+00:00';
  if (sign !== undefined) {
    const oh = offsetHours ?? '00';
    const om = offsetMinutes ?? '00';
    if (Number(oh) > 14 || Number(om) > 59) return undefined;
    zone = `${sign}${oh}:${om}`;
  }
  return `${year}-${month}-${day}T${hour}:${minute}:${sec}${frac}${zone}`;
}
