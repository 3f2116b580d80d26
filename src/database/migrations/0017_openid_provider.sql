CREATE TABLE "oidc_authorization_codes" (
	"id" text PRIMARY KEY NOT NULL,
	"membership_id" text NOT NULL,
	"client_id" text NOT NULL,
	"user_id" text NOT NULL,
	"session_id" text NOT NULL,
	"redirect_uri" text NOT NULL,
	"code_challenge" text NOT NULL,
	"scopes" jsonb NOT NULL,
	"nonce" text,
	"resource" text,
	"auth_time" timestamp with time zone NOT NULL,
	"amr" jsonb,
	"consumed_at" timestamp with time zone,
	"issued_token_id" text,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "oidc_client_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"membership_id" text NOT NULL,
	"client_id" text NOT NULL,
	"scopes" jsonb NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	"revoked_by" text,
	"revoke_reason" text
);
--> statement-breakpoint
CREATE TABLE "oidc_consents" (
	"membership_id" text NOT NULL,
	"user_id" text NOT NULL,
	"client_id" text NOT NULL,
	"scopes" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "oidc_consents_membership_id_user_id_client_id_pk" PRIMARY KEY("membership_id","user_id","client_id")
);
--> statement-breakpoint
CREATE TABLE "oidc_interactions" (
	"id" text PRIMARY KEY NOT NULL,
	"membership_id" text NOT NULL,
	"cookie_digest" text NOT NULL,
	"client_id" text NOT NULL,
	"redirect_uri" text NOT NULL,
	"scopes" jsonb NOT NULL,
	"state" text,
	"nonce" text,
	"code_challenge" text NOT NULL,
	"prompt" text,
	"max_age" integer,
	"resource" text,
	"stage" text DEFAULT 'login' NOT NULL,
	"user_id" text,
	"amr" jsonb,
	"auth_time" timestamp with time zone,
	"session_id" text,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "token_codes" ADD COLUMN "oidc_client_id" text;--> statement-breakpoint
ALTER TABLE "token_codes" ADD COLUMN "oidc_scopes" jsonb;--> statement-breakpoint
ALTER TABLE "token_sessions" ADD COLUMN "client_id" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "email_verified_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "oidc_authorization_codes" ADD CONSTRAINT "oidc_authorization_codes_membership_id_memberships_id_fk" FOREIGN KEY ("membership_id") REFERENCES "public"."memberships"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_authorization_codes" ADD CONSTRAINT "oidc_authorization_codes_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_authorization_codes" ADD CONSTRAINT "oidc_authorization_codes_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_client_tokens" ADD CONSTRAINT "oidc_client_tokens_membership_id_memberships_id_fk" FOREIGN KEY ("membership_id") REFERENCES "public"."memberships"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_client_tokens" ADD CONSTRAINT "oidc_client_tokens_client_id_applications_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_consents" ADD CONSTRAINT "oidc_consents_membership_id_memberships_id_fk" FOREIGN KEY ("membership_id") REFERENCES "public"."memberships"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_consents" ADD CONSTRAINT "oidc_consents_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_consents" ADD CONSTRAINT "oidc_consents_client_id_applications_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_interactions" ADD CONSTRAINT "oidc_interactions_membership_id_memberships_id_fk" FOREIGN KEY ("membership_id") REFERENCES "public"."memberships"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_interactions" ADD CONSTRAINT "oidc_interactions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_interactions" ADD CONSTRAINT "oidc_interactions_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "oidc_authorization_codes_expires_at" ON "oidc_authorization_codes" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "oidc_client_tokens_expires_at" ON "oidc_client_tokens" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "oidc_consents_client" ON "oidc_consents" USING btree ("client_id");--> statement-breakpoint
CREATE INDEX "oidc_interactions_expires_at" ON "oidc_interactions" USING btree ("expires_at");