CREATE TABLE "token_code_policies" (
	"id" text PRIMARY KEY NOT NULL,
	"membership_id" text NOT NULL,
	"name" text NOT NULL,
	"slug" text NOT NULL,
	"description" text,
	"length" integer DEFAULT 8 NOT NULL,
	"contains_letters" boolean DEFAULT true NOT NULL,
	"contains_digits" boolean DEFAULT true NOT NULL,
	"expires_in" integer DEFAULT 600 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by" text NOT NULL,
	"modified_at" timestamp with time zone,
	"modified_by" text
);
--> statement-breakpoint
CREATE TABLE "token_codes" (
	"id" text PRIMARY KEY NOT NULL,
	"membership_id" text NOT NULL,
	"user_code" text NOT NULL,
	"device_code_digest" text NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"client_info" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"poll_interval" integer NOT NULL,
	"last_polled_at" timestamp with time zone,
	"approved_by" text,
	"scopes" jsonb,
	"decided_at" timestamp with time zone,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "memberships" ADD COLUMN "code_policy" text;--> statement-breakpoint
ALTER TABLE "token_code_policies" ADD CONSTRAINT "token_code_policies_membership_id_memberships_id_fk" FOREIGN KEY ("membership_id") REFERENCES "public"."memberships"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "token_codes" ADD CONSTRAINT "token_codes_membership_id_memberships_id_fk" FOREIGN KEY ("membership_id") REFERENCES "public"."memberships"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "token_codes" ADD CONSTRAINT "token_codes_approved_by_users_id_fk" FOREIGN KEY ("approved_by") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "token_code_policies_slug_unique" ON "token_code_policies" USING btree ("membership_id","slug");--> statement-breakpoint
CREATE INDEX "token_code_policies_created" ON "token_code_policies" USING btree ("membership_id","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "token_codes_user_code_unique" ON "token_codes" USING btree ("membership_id","user_code");--> statement-breakpoint
CREATE UNIQUE INDEX "token_codes_device_code_unique" ON "token_codes" USING btree ("device_code_digest");--> statement-breakpoint
CREATE INDEX "token_codes_expires_at" ON "token_codes" USING btree ("expires_at");--> statement-breakpoint
-- Admin roles manage every resource of their membership: the new one included.
UPDATE "roles" SET "permissions" = "permissions" || '["token-code-policies.*"]'::jsonb
  WHERE "slug" = 'admin' AND NOT "permissions" @> '["token-code-policies.*"]'::jsonb;
