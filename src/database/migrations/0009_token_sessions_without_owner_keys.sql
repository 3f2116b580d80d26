ALTER TABLE "token_sessions" DROP CONSTRAINT "token_sessions_membership_id_memberships_id_fk";
--> statement-breakpoint
ALTER TABLE "token_sessions" DROP CONSTRAINT "token_sessions_user_id_users_id_fk";
