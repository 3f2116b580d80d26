-- The type index ends with id, like the time index: the default order (event_time desc, id desc)
-- of one type is then read from it without a sort, so the planner no longer prefers a backward
-- scan of the time index that skips every newer event of other types.
DROP INDEX "events_membership_type_time";--> statement-breakpoint
CREATE INDEX "events_membership_type_time" ON "events" USING btree ("membership_id","event_type","event_time","id");