ALTER TABLE "token_sessions" ADD COLUMN "auth_time" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "token_sessions" ADD COLUMN "amr" jsonb;