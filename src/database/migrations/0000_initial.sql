CREATE TABLE "applications" (
	"id" text PRIMARY KEY NOT NULL,
	"membership_id" text NOT NULL,
	"name" text NOT NULL,
	"slug" text NOT NULL,
	"description" text,
	"role" text,
	"permissions" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"forbidden" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"secret_digest" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by" text NOT NULL,
	"modified_at" timestamp with time zone,
	"modified_by" text
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" text PRIMARY KEY NOT NULL,
	"membership_id" text NOT NULL,
	"event_type" text NOT NULL,
	"utilizer_id" text NOT NULL,
	"document" jsonb NOT NULL,
	"prior" jsonb,
	"event_time" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "memberships" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"slug" text NOT NULL,
	"secret_key" text NOT NULL,
	"expires_in" integer DEFAULT 3600 NOT NULL,
	"refresh_token_expires_in" integer DEFAULT 86400 NOT NULL,
	"scoped_token_expires_in" integer,
	"hash_algorithm" text DEFAULT 'ARGON2ID' NOT NULL,
	"user_activation" text DEFAULT 'active' NOT NULL,
	"mail_providers" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"otp_settings" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"is_system" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by" text NOT NULL,
	"modified_at" timestamp with time zone,
	"modified_by" text
);
--> statement-breakpoint
CREATE TABLE "roles" (
	"id" text PRIMARY KEY NOT NULL,
	"membership_id" text NOT NULL,
	"name" text NOT NULL,
	"slug" text NOT NULL,
	"description" text,
	"permissions" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"forbidden" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by" text NOT NULL,
	"modified_at" timestamp with time zone,
	"modified_by" text
);
--> statement-breakpoint
CREATE TABLE "token_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"membership_id" text NOT NULL,
	"user_id" text NOT NULL,
	"kind" text NOT NULL,
	"parent_id" text,
	"scopes" jsonb,
	"access_jti" text NOT NULL,
	"refresh_jti" text,
	"access_expires_at" timestamp with time zone NOT NULL,
	"refresh_expires_at" timestamp with time zone,
	"expires_at" timestamp with time zone NOT NULL,
	"ip_address" text,
	"user_agent" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	"revoked_by" text,
	"revoke_reason" text
);
--> statement-breakpoint
CREATE TABLE "user_types" (
	"id" text PRIMARY KEY NOT NULL,
	"membership_id" text NOT NULL,
	"name" text NOT NULL,
	"slug" text NOT NULL,
	"description" text,
	"properties" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"allow_additional_properties" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by" text NOT NULL,
	"modified_at" timestamp with time zone,
	"modified_by" text
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text PRIMARY KEY NOT NULL,
	"membership_id" text NOT NULL,
	"username" text NOT NULL,
	"email_address" text NOT NULL,
	"password_hash" text NOT NULL,
	"firstname" text,
	"lastname" text,
	"role" text,
	"user_type" text,
	"permissions" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"forbidden" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"source_provider" text,
	"custom_fields" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by" text NOT NULL,
	"modified_at" timestamp with time zone,
	"modified_by" text
);
--> statement-breakpoint
CREATE TABLE "webhooks" (
	"id" text PRIMARY KEY NOT NULL,
	"membership_id" text NOT NULL,
	"name" text NOT NULL,
	"slug" text NOT NULL,
	"description" text,
	"event" text NOT NULL,
	"status" text NOT NULL,
	"try_count" integer NOT NULL,
	"request" jsonb NOT NULL,
	"secret" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by" text NOT NULL,
	"modified_at" timestamp with time zone,
	"modified_by" text
);
--> statement-breakpoint
ALTER TABLE "applications" ADD CONSTRAINT "applications_membership_id_memberships_id_fk" FOREIGN KEY ("membership_id") REFERENCES "public"."memberships"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "roles" ADD CONSTRAINT "roles_membership_id_memberships_id_fk" FOREIGN KEY ("membership_id") REFERENCES "public"."memberships"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "token_sessions" ADD CONSTRAINT "token_sessions_membership_id_memberships_id_fk" FOREIGN KEY ("membership_id") REFERENCES "public"."memberships"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "token_sessions" ADD CONSTRAINT "token_sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_types" ADD CONSTRAINT "user_types_membership_id_memberships_id_fk" FOREIGN KEY ("membership_id") REFERENCES "public"."memberships"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_membership_id_memberships_id_fk" FOREIGN KEY ("membership_id") REFERENCES "public"."memberships"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_membership_id_memberships_id_fk" FOREIGN KEY ("membership_id") REFERENCES "public"."memberships"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "applications_slug_unique" ON "applications" USING btree ("membership_id","slug");--> statement-breakpoint
CREATE INDEX "applications_membership_created" ON "applications" USING btree ("membership_id","created_at");--> statement-breakpoint
CREATE INDEX "events_membership_time" ON "events" USING btree ("membership_id","event_time","id");--> statement-breakpoint
CREATE INDEX "events_membership_type_time" ON "events" USING btree ("membership_id","event_type","event_time");--> statement-breakpoint
CREATE INDEX "events_membership_utilizer_time" ON "events" USING btree ("membership_id","utilizer_id","event_time");--> statement-breakpoint
CREATE UNIQUE INDEX "memberships_slug_unique" ON "memberships" USING btree ("slug");--> statement-breakpoint
CREATE UNIQUE INDEX "memberships_single_system" ON "memberships" USING btree ("is_system") WHERE "memberships"."is_system";--> statement-breakpoint
CREATE UNIQUE INDEX "roles_slug_unique" ON "roles" USING btree ("membership_id","slug");--> statement-breakpoint
CREATE INDEX "roles_membership_created" ON "roles" USING btree ("membership_id","created_at");--> statement-breakpoint
CREATE INDEX "token_sessions_user" ON "token_sessions" USING btree ("membership_id","user_id");--> statement-breakpoint
CREATE INDEX "token_sessions_parent" ON "token_sessions" USING btree ("parent_id");--> statement-breakpoint
CREATE INDEX "token_sessions_expires" ON "token_sessions" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "token_sessions_membership_created" ON "token_sessions" USING btree ("membership_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "user_types_slug_unique" ON "user_types" USING btree ("membership_id","slug");--> statement-breakpoint
CREATE INDEX "user_types_membership_created" ON "user_types" USING btree ("membership_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "users_username_unique" ON "users" USING btree ("membership_id",lower("username"));--> statement-breakpoint
CREATE UNIQUE INDEX "users_email_unique" ON "users" USING btree ("membership_id","email_address");--> statement-breakpoint
CREATE INDEX "users_membership_created" ON "users" USING btree ("membership_id","created_at");--> statement-breakpoint
CREATE INDEX "users_membership_role" ON "users" USING btree ("membership_id","role");--> statement-breakpoint
CREATE UNIQUE INDEX "webhooks_slug_unique" ON "webhooks" USING btree ("membership_id","slug");--> statement-breakpoint
CREATE INDEX "webhooks_membership_event" ON "webhooks" USING btree ("membership_id","event","status");--> statement-breakpoint
CREATE INDEX "webhooks_membership_created" ON "webhooks" USING btree ("membership_id","created_at");