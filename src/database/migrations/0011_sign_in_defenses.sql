CREATE TABLE "sign_in_counters" (
	"id" text PRIMARY KEY NOT NULL,
	"membership_id" text,
	"failures" integer NOT NULL,
	"window_ends_at" timestamp with time zone NOT NULL,
	"locked_until" timestamp with time zone,
	"lock_level" integer DEFAULT 0 NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "memberships" ADD COLUMN "sign_in_policy" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "sign_in_counters" ADD CONSTRAINT "sign_in_counters_membership_id_memberships_id_fk" FOREIGN KEY ("membership_id") REFERENCES "public"."memberships"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sign_in_counters_expires_at" ON "sign_in_counters" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "sign_in_counters_membership" ON "sign_in_counters" USING btree ("membership_id");