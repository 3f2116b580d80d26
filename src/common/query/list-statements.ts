import { sql, type SQL } from 'drizzle-orm';
import { prepareReading, type Executor } from '../../database/database';
import { buildListSelect, listResponses, listSelectParts, type ListQuery, type ListSelectParts, type PageStatements } from './list-query';
import type { ListParams } from './list-params';
import { StatementShape } from './statement-shape';

/**
 * A page statement built once for its shape; `execute` takes the shape's values and the page
 * bounds, and answers the page's responses (read as the resource reads its rows: one resource's
 * statements share its `readRow` and `toResponse`).
 */
interface PageStatement {
  execute(values: Record<string, unknown>): Promise<object[]>;
}

/** Shapes kept per resource: the few a client sends again and again. Past it, new shapes run as before. */
const MAX_SHAPES = 200;

/** Named statements of every ListStatements of the process: node-postgres keys them by name per connection. */
let namedStatements = 0;

/**
 * One resource's page statements, by the shape of the request (StatementShape): a list or
 * `_query` of a shape seen before skips drizzle building its SELECT, which was most of the
 * service's own CPU time per `_query`. The request is still translated and checked every time
 * (the same validation and errors); only the statement text is reused.
 *
 * Each statement is sent unnamed (an empty name: node-postgres then parses it with each request's
 * values, as it did when built per request), so PostgreSQL plans every execution for its own
 * values: a membership of 10 events and one of a million never share a generic plan. Except a
 * split `$in` read by its index alone (`indexOnly`, e.g. events `_query` by types): every value
 * gives the same plan, an ordered index read that stops at the page, so it is named, and each
 * pooled connection parses it once. That halved PostgreSQL's CPU per events `_query` by two
 * types (about 500 µs to 250, measured beside unnamed); PostgreSQL still plans it per execution,
 * since its estimate of a generic plan with the LIMIT as a parameter stays above a custom one.
 *
 * Statements are built on the executor given here (the database, outside any transaction). A
 * request on another executor (inside a request transaction) is built as before.
 *
 * A resource with `readRow` has its statements answer responses read from the driver's rows
 * (prepareReading): reading a 20-row events page through Drizzle's row objects and then the
 * mapper took about 40 µs of the service's CPU (measured alone), read straight about 11.
 */
export class ListStatements implements PageStatements {
  private readonly statements = new Map<string, PageStatement>();

  constructor(private readonly executor: Executor) {}

  /** How many shapes have a statement. */
  get size(): number {
    return this.statements.size;
  }

  async responses<TRow>(query: ListQuery<TRow>, params: ListParams): Promise<object[]> {
    if (query.executor !== this.executor) return listResponses(query, params);
    const parts = listSelectParts(query, params);
    const shape = new StatementShape();
    if (!walkPieces(shape, parts, false)) return listResponses(query, params);

    let statement = this.statements.get(shape.key);
    if (!statement) {
      if (this.statements.size >= MAX_SHAPES) return listResponses(query, params);
      statement = this.build(query, parts);
      if (!statement) return listResponses(query, params);
      this.statements.set(shape.key, statement);
    }
    const values: Record<string, unknown> = { limit: params.limit, offset: params.skip, window: params.skip + params.limit };
    shape.values.forEach((value, index) => (values[`v${index}`] = value));
    return statement.execute(values);
  }

  /** The shape's statement, with placeholders where this request's values were. */
  private build<TRow>(query: ListQuery<TRow>, parts: ListSelectParts): PageStatement | undefined {
    const rebuilt = walkPieces(new StatementShape(), parts, true);
    if (!rebuilt) return undefined;
    const [condition, order, resultOrder, ...conditions] = rebuilt;
    if (!order) return undefined;
    const placeholders: ListSelectParts = { condition, order, split: parts.split && resultOrder ? { ...parts.split, conditions, resultOrder } : undefined };
    const bounds = { limit: sql.placeholder('limit'), offset: sql.placeholder('offset'), window: sql.placeholder('window') };
    const select = buildListSelect(this.executor, query.table, placeholders, bounds);
    const name = parts.split?.indexOnly ? `list_page_${++namedStatements}` : '';
    if (query.readRow) return prepareReading(this.executor, select, query.readRow, name);
    const prepared = select.prepare(name);
    return { execute: async (values) => ((await prepared.execute(values)) as TRow[]).map((row) => query.toResponse(row)) };
  }
}

/** A piece boundary in the shape: an absent piece and an empty one must not look alike. */
const SEPARATOR = sql`;`;

/**
 * Walks every piece of the SELECT into the shape, always in this order, so that the values are
 * numbered alike when shaped and when rebuilt. Answers the pieces (rebuilt with placeholders when
 * asked), or undefined when one cannot be shaped.
 */
function walkPieces(shape: StatementShape, parts: ListSelectParts, rebuild: boolean): (SQL | undefined)[] | undefined {
  const pieces = [parts.condition, parts.order, parts.split?.resultOrder, ...(parts.split?.conditions ?? [])];
  const walked: (SQL | undefined)[] = [];
  for (const piece of pieces) {
    if (piece) {
      const result = shape.add(piece, rebuild);
      if (!result) return undefined;
      walked.push(result);
    } else {
      walked.push(undefined);
    }
    shape.add(SEPARATOR, false);
  }
  return walked;
}
