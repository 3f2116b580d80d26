-- The event stream's commit-ordered cursor (docs/events.md, "The live stream"): the id of the
-- transaction that wrote each event. An event is streamed only once every transaction older than
-- the reader's commit horizon has finished, so one that commits late cannot be passed over.
-- Not in the Drizzle schema on purpose: the batch insert lists the table's columns, and this one
-- must always take its default.
ALTER TABLE "events" ADD COLUMN "commit_xid" xid8 DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
CREATE INDEX "events_membership_commit" ON "events" USING btree ("membership_id","commit_xid","id");
