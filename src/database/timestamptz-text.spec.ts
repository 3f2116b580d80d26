import { isoFromTimestamptzText } from './timestamptz-text';

describe('isoFromTimestamptzText', () => {
  it.each([
    '2026-11-29 13:50:11+00',
    '2026-11-29 13:50:11.1+00',
    '2026-11-29 13:50:11.12+00',
    '2026-11-29 13:50:11.123+00',
    '2026-11-29 13:50:11.123456+00',
    '1999-12-31 23:59:59.9995+00',
    '2026-03-04 05:06:07.891234+02:30',
    '2026-03-04 05:06:07.891234-08',
    '2000-02-29 00:00:00+00',
  ])('reads %s as new Date(text).toISOString() does', (text) => {
    expect(isoFromTimestamptzText(text)).toBe(new Date(text).toISOString());
  });

  it('reads UTC text by slicing, to the millisecond and never rounding up', () => {
    expect(isoFromTimestamptzText('1999-12-31 23:59:59.9999+00')).toBe('1999-12-31T23:59:59.999Z');
    expect(isoFromTimestamptzText('2026-01-01 00:00:00+00')).toBe('2026-01-01T00:00:00.000Z');
  });
});
