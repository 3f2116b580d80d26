CREATE TABLE "mailhooks" (
	"id" text PRIMARY KEY NOT NULL,
	"membership_id" text NOT NULL,
	"name" text NOT NULL,
	"slug" text NOT NULL,
	"description" text,
	"event" text NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"mail_provider" text NOT NULL,
	"from_address" text NOT NULL,
	"from_name" text,
	"mail_subject" text NOT NULL,
	"mail_format" text NOT NULL,
	"mail_template" text NOT NULL,
	"send_to_utilizer" boolean DEFAULT false NOT NULL,
	"recipients" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by" text NOT NULL,
	"modified_at" timestamp with time zone,
	"modified_by" text
);
--> statement-breakpoint
ALTER TABLE "mailhooks" ADD CONSTRAINT "mailhooks_membership_id_memberships_id_fk" FOREIGN KEY ("membership_id") REFERENCES "public"."memberships"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "mailhooks_slug_unique" ON "mailhooks" USING btree ("membership_id","slug");--> statement-breakpoint
CREATE INDEX "mailhooks_membership_event" ON "mailhooks" USING btree ("membership_id","event","is_active");--> statement-breakpoint
CREATE INDEX "mailhooks_membership_created" ON "mailhooks" USING btree ("membership_id","created_at");