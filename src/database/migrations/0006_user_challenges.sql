CREATE TABLE "user_challenges" (
	"id" text PRIMARY KEY NOT NULL,
	"membership_id" text NOT NULL,
	"user_id" text NOT NULL,
	"kind" text NOT NULL,
	"jti" text NOT NULL,
	"otp_digest" text,
	"otp_attempts" integer DEFAULT 0 NOT NULL,
	"otp_expires_at" timestamp with time zone,
	"requested_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "user_challenges" ADD CONSTRAINT "user_challenges_membership_id_memberships_id_fk" FOREIGN KEY ("membership_id") REFERENCES "public"."memberships"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_challenges" ADD CONSTRAINT "user_challenges_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "user_challenges_user_kind_unique" ON "user_challenges" USING btree ("user_id","kind");--> statement-breakpoint
CREATE INDEX "user_challenges_expires_at" ON "user_challenges" USING btree ("expires_at");