/** The API's `sys` block, built from the bookkeeping columns every resource has. */
export interface Sys {
  created_at: string;
  created_by: string;
  modified_at?: string;
  modified_by?: string;
}

export function toSys(row: { createdAt: Date; createdBy: string; modifiedAt: Date | null; modifiedBy: string | null }): Sys {
  const sys: Sys = { created_at: row.createdAt.toISOString(), created_by: row.createdBy };
  if (row.modifiedAt) sys.modified_at = row.modifiedAt.toISOString();
  if (row.modifiedBy) sys.modified_by = row.modifiedBy;
  return sys;
}
