CREATE TABLE "signing_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"membership_id" text NOT NULL,
	"algorithm" text NOT NULL,
	"public_jwk" jsonb NOT NULL,
	"private_jwk" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"retired_at" timestamp with time zone,
	"expires_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "signing_keys" ADD CONSTRAINT "signing_keys_membership_id_memberships_id_fk" FOREIGN KEY ("membership_id") REFERENCES "public"."memberships"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "signing_keys_current" ON "signing_keys" USING btree ("membership_id") WHERE "signing_keys"."retired_at" is null;--> statement-breakpoint
CREATE INDEX "signing_keys_membership" ON "signing_keys" USING btree ("membership_id");--> statement-breakpoint
CREATE INDEX "signing_keys_expires_at" ON "signing_keys" USING btree ("expires_at");