CREATE TABLE "provider_identities" (
	"id" text PRIMARY KEY NOT NULL,
	"membership_id" text NOT NULL,
	"provider_id" text NOT NULL,
	"subject" text NOT NULL,
	"user_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "providers" (
	"id" text PRIMARY KEY NOT NULL,
	"membership_id" text NOT NULL,
	"name" text NOT NULL,
	"slug" text NOT NULL,
	"description" text,
	"type" text NOT NULL,
	"issuer" text NOT NULL,
	"client_id" text NOT NULL,
	"client_secret" text,
	"default_role" text,
	"default_user_type" text,
	"is_active" boolean DEFAULT true NOT NULL,
	"trust_email" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by" text NOT NULL,
	"modified_at" timestamp with time zone,
	"modified_by" text
);
--> statement-breakpoint
ALTER TABLE "provider_identities" ADD CONSTRAINT "provider_identities_membership_id_memberships_id_fk" FOREIGN KEY ("membership_id") REFERENCES "public"."memberships"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "provider_identities" ADD CONSTRAINT "provider_identities_provider_id_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "public"."providers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "provider_identities" ADD CONSTRAINT "provider_identities_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "providers" ADD CONSTRAINT "providers_membership_id_memberships_id_fk" FOREIGN KEY ("membership_id") REFERENCES "public"."memberships"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "provider_identities_subject_unique" ON "provider_identities" USING btree ("provider_id","subject");--> statement-breakpoint
CREATE INDEX "provider_identities_user" ON "provider_identities" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "providers_slug_unique" ON "providers" USING btree ("membership_id","slug");--> statement-breakpoint
CREATE INDEX "providers_membership_created" ON "providers" USING btree ("membership_id","created_at");--> statement-breakpoint
-- Admin roles made before providers existed: adminPermissions now includes providers.*.
UPDATE "roles" SET "permissions" = "permissions" || '["providers.*"]'::jsonb WHERE "slug" = 'admin' AND NOT ("permissions" @> '["providers.*"]'::jsonb);
