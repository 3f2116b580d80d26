/**
 * A timestamptz as PostgreSQL writes it in text (DateStyle ISO: `2026-11-29 13:50:11.123456+00`)
 * to the ISO 8601 the API answers (`2026-11-29T13:50:11.123Z`), truncated to milliseconds as
 * `new Date(text).toISOString()` does. A session in UTC (the embedded database's, and a server's
 * set to it) is read by slicing the text; any other offset, or any text of another form, takes
 * the Date parser, which cost six times as much (1.6 against 0.25 µs; an events page reads 20).
 */
const UTC_TEXT = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?\+00$/;

export function isoFromTimestamptzText(text: string): string {
  const match = UTC_TEXT.exec(text);
  if (!match) return new Date(text).toISOString();
  const [, date, time, fraction = ''] = match;
  const millis = fraction.length >= 3 ? fraction.slice(0, 3) : fraction.padEnd(3, '0');
  return `${date}T${time}.${millis}Z`;
}
