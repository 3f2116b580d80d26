import * as drizzle from 'drizzle-orm';

/*
 * drizzle's classes, read once: the compiled CommonJS reaches an imported binding through three
 * re-export getters on every read, and this walk tests every chunk of every request against them
 * (a fifth of its time, profiled).
 */
const { Column, Name, Param, Placeholder, SQL, StringChunk, Table, getTableName, sql } = drizzle;
type SQL = drizzle.SQL;
type Param<TData, TDriver> = drizzle.Param<TData, TDriver>;

const UNCACHEABLE = Symbol('UNCACHEABLE');
/** Starts every part of a shape that is not SQL text: no SQL text holds a NUL, so no text can pass for one. */
const MARK = '\u0000';

/**
 * A drizzle SQL fragment split into its shape and its values: the shape is everything that makes
 * up the statement's text (SQL words, column and table names, where each bound value goes), the
 * values are the bound values in the order the text uses them. Two fragments with one shape give
 * one statement text, so a statement built once for the shape, with placeholders where the values
 * were, serves every later fragment of that shape (`ListStatements`).
 *
 * It walks the same chunks drizzle's `buildQueryFromSourceParams` walks. What it does not know
 * (subqueries, views, aliased or inlined SQL, placeholders already there) makes the fragment
 * uncacheable rather than guessed at.
 */
export class StatementShape {
  private readonly parts: string[] = [];
  readonly values: unknown[] = [];

  /** The shape's text: equal keys give equal statement texts. */
  get key(): string {
    return this.parts.join('');
  }

  /**
   * Adds a fragment to the shape and its values after those already taken; undefined when the
   * fragment holds something this walk does not know. With `rebuild`, answers the fragment with
   * each value replaced by a placeholder named after its position (`v0`, `v1`, ...); otherwise
   * answers the fragment itself (the walk alone is cheaper).
   */
  add(fragment: SQL, rebuild: boolean): SQL | undefined {
    const result = this.chunk(fragment, rebuild);
    return result === UNCACHEABLE ? undefined : (result as SQL);
  }

  private bind(value: unknown, encoder: Param<unknown, unknown>['encoder'] | undefined, rebuild: boolean): unknown {
    const name = `v${this.values.length}`;
    this.values.push(value);
    // The encoder (a column's) maps the value when the statement runs, as it would have when built.
    this.parts.push(encoder instanceof Column ? `${MARK}?${encoder.name}` : `${MARK}?`);
    if (!rebuild) return undefined;
    return encoder ? new Param(sql.placeholder(name), encoder) : sql.placeholder(name);
  }

  private chunk(chunk: unknown, rebuild: boolean): unknown {
    if (chunk === undefined) return chunk;
    if (chunk instanceof StringChunk) {
      this.parts.push(chunk.value.join(''));
      return chunk;
    }
    if (chunk instanceof SQL) {
      // `inlineParams()` writes the values into the text: drizzle keeps that flag private.
      if ((chunk as unknown as { shouldInlineParams?: boolean }).shouldInlineParams) return UNCACHEABLE;
      this.parts.push(`${MARK}{`);
      const chunks: unknown[] = [];
      for (const inner of chunk.queryChunks) {
        const result = this.chunk(inner, rebuild);
        if (result === UNCACHEABLE) return UNCACHEABLE;
        chunks.push(result);
      }
      this.parts.push(`${MARK}}`);
      return rebuild ? new SQL(chunks as SQL['queryChunks']) : chunk;
    }
    if (Array.isArray(chunk)) {
      this.parts.push(`${MARK}(`);
      const items: unknown[] = [];
      for (const item of chunk as unknown[]) {
        const result = this.chunk(item, rebuild);
        if (result === UNCACHEABLE) return UNCACHEABLE;
        items.push(result);
        this.parts.push(`${MARK},`);
      }
      this.parts.push(`${MARK})`);
      return rebuild ? items : chunk;
    }
    if (chunk instanceof Column) {
      this.parts.push(`${MARK}c${getTableName(chunk.table)}.${chunk.name}`);
      return chunk;
    }
    if (chunk instanceof Table) {
      this.parts.push(`${MARK}t${getTableName(chunk)}`);
      return chunk;
    }
    if (chunk instanceof Name) {
      this.parts.push(`${MARK}n${chunk.value}`);
      return chunk;
    }
    if (chunk instanceof Param) {
      const param = chunk as Param<unknown, unknown>;
      const { value, encoder } = param;
      if (value instanceof Placeholder) return UNCACHEABLE;
      // An encoder that turns a value into SQL changes the text with the value.
      if (value !== null && encoder.mapToDriverValue(value) instanceof SQL) return UNCACHEABLE;
      return this.bind(value, encoder, rebuild);
    }
    if (chunk instanceof Placeholder) return UNCACHEABLE;
    // Any other SQL-bearing object (a subquery, a view, an alias) adds text of its own.
    if (typeof chunk === 'object' && chunk !== null && !(chunk instanceof Date) && 'getSQL' in chunk) return UNCACHEABLE;
    // A plain value in the template: drizzle binds it as a parameter.
    return this.bind(chunk, undefined, rebuild);
  }
}
