export type { FieldType, QueryField, QuerySchema } from './query-schema';
export { queryFields, querySchema, type ColumnFieldOptions, type ColumnKey, type FieldEntry } from './column-fields';
export { isSetField, membershipSysFields, namedResourceFields, sysFields } from './resource-fields';
export { sortableFieldNames } from './field-path';
export {
  QUERY_LIMITS,
  applyProjection,
  parseListParams,
  parseSelect,
  translateSort,
  translateWhere,
  whereReadsUnindexed,
  type ListParams,
  type Projection,
} from './translate';
export { LIST_LIMITS } from './list-params';
export { normalizeIsoTimestamp } from './iso-timestamp';
export { MAX_SEARCH_KEYWORD_LENGTH, likePattern, parseSearchKeyword } from './search-keyword';
export {
  runListQuery,
  listSelect,
  parseBulkIds,
  deleteByIds,
  bulkDeleteAnswer,
  MAX_BULK_IDS,
  type ListRequest,
  type ListPage,
  type ListQuery,
} from './list-query';
export { ListStatements } from './list-statements';
