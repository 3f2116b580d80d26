CREATE TABLE "sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"membership_id" text NOT NULL,
	"user_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	"revoked_by" text,
	"revoke_reason" text
);
--> statement-breakpoint
-- Existing tokens: each pair is a session of its own (the refresh chains before this were not
-- linked), and a scoped token joins its parent pair's session, or is one of its own when the
-- parent was swept. A session is revoked when its first token was, except by rotation.
ALTER TABLE "token_sessions" ADD COLUMN "session_id" text;--> statement-breakpoint
UPDATE "token_sessions" SET "session_id" = "id" WHERE "kind" = 'pair';--> statement-breakpoint
UPDATE "token_sessions" AS "scoped" SET "session_id" = "parent"."id" FROM "token_sessions" AS "parent"
  WHERE "scoped"."kind" = 'scoped' AND "parent"."id" = "scoped"."parent_id" AND "parent"."kind" = 'pair';--> statement-breakpoint
UPDATE "token_sessions" SET "session_id" = "id" WHERE "session_id" IS NULL;--> statement-breakpoint
INSERT INTO "sessions" ("id", "membership_id", "user_id", "created_at", "revoked_at", "revoked_by", "revoke_reason")
  SELECT "root"."id", "root"."membership_id", "root"."user_id", "root"."created_at",
    CASE WHEN "root"."revoke_reason" IS DISTINCT FROM 'refreshed' THEN "root"."revoked_at" END,
    CASE WHEN "root"."revoke_reason" IS DISTINCT FROM 'refreshed' THEN "root"."revoked_by" END,
    CASE WHEN "root"."revoke_reason" IS DISTINCT FROM 'refreshed' THEN "root"."revoke_reason" END
  FROM "token_sessions" AS "root" WHERE "root"."session_id" = "root"."id";--> statement-breakpoint
ALTER TABLE "token_sessions" ALTER COLUMN "session_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_membership_id_memberships_id_fk" FOREIGN KEY ("membership_id") REFERENCES "public"."memberships"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sessions_user" ON "sessions" USING btree ("membership_id","user_id");--> statement-breakpoint
ALTER TABLE "token_sessions" ADD CONSTRAINT "token_sessions_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "token_sessions_session" ON "token_sessions" USING btree ("session_id");