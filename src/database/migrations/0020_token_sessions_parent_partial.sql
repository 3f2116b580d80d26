DROP INDEX "token_sessions_parent";--> statement-breakpoint
CREATE INDEX "token_sessions_parent" ON "token_sessions" USING btree ("parent_id") WHERE "token_sessions"."parent_id" is not null;