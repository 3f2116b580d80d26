ALTER TABLE "token_codes" ADD COLUMN "approved_session_id" text;--> statement-breakpoint
ALTER TABLE "token_codes" ADD COLUMN "approved_token_id" text;--> statement-breakpoint
ALTER TABLE "token_codes" ADD COLUMN "approved_until" timestamp with time zone;