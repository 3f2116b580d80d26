-- Admin roles manage every resource of their membership (adminPermissions in src/roles/role.mapper.ts).
-- Roles made before a resource existed lack its permission: mail hooks (0004 added none), and any
-- other whose earlier migration an installation missed. Each statement adds one `<resource>.*` where
-- it is missing, so running this again, or on roles that already hold it, changes nothing. The API
-- cannot change an admin role (409 ReservedRole), so a missing entry is never an operator's choice.
-- The memberships.* / memberships.<action>.<id> entries are as old as admin roles and stay as they are.
UPDATE "roles" SET "permissions" = "permissions" || '["users.*"]'::jsonb WHERE "slug" = 'admin' AND NOT "permissions" @> '["users.*"]'::jsonb;
--> statement-breakpoint
UPDATE "roles" SET "permissions" = "permissions" || '["user-types.*"]'::jsonb WHERE "slug" = 'admin' AND NOT "permissions" @> '["user-types.*"]'::jsonb;
--> statement-breakpoint
UPDATE "roles" SET "permissions" = "permissions" || '["roles.*"]'::jsonb WHERE "slug" = 'admin' AND NOT "permissions" @> '["roles.*"]'::jsonb;
--> statement-breakpoint
UPDATE "roles" SET "permissions" = "permissions" || '["applications.*"]'::jsonb WHERE "slug" = 'admin' AND NOT "permissions" @> '["applications.*"]'::jsonb;
--> statement-breakpoint
UPDATE "roles" SET "permissions" = "permissions" || '["webhooks.*"]'::jsonb WHERE "slug" = 'admin' AND NOT "permissions" @> '["webhooks.*"]'::jsonb;
--> statement-breakpoint
UPDATE "roles" SET "permissions" = "permissions" || '["providers.*"]'::jsonb WHERE "slug" = 'admin' AND NOT "permissions" @> '["providers.*"]'::jsonb;
--> statement-breakpoint
UPDATE "roles" SET "permissions" = "permissions" || '["mailhooks.*"]'::jsonb WHERE "slug" = 'admin' AND NOT "permissions" @> '["mailhooks.*"]'::jsonb;
--> statement-breakpoint
UPDATE "roles" SET "permissions" = "permissions" || '["token-code-policies.*"]'::jsonb WHERE "slug" = 'admin' AND NOT "permissions" @> '["token-code-policies.*"]'::jsonb;
--> statement-breakpoint
UPDATE "roles" SET "permissions" = "permissions" || '["events.*"]'::jsonb WHERE "slug" = 'admin' AND NOT "permissions" @> '["events.*"]'::jsonb;
--> statement-breakpoint
UPDATE "roles" SET "permissions" = "permissions" || '["tokens.*"]'::jsonb WHERE "slug" = 'admin' AND NOT "permissions" @> '["tokens.*"]'::jsonb;
