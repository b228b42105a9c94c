-- Rows whose workspace is gone were left by a deletion that raced their creation. Finish that
-- deletion as deleting a workspace does (links and linktrees go, so their slugs are free again;
-- tokens are revoked; sessions fall back to the personal workspace; click events stay), so the
-- foreign keys below can hold from now on.
UPDATE "sessions" SET "workspace_id" = NULL WHERE "workspace_id" IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "workspaces" w WHERE w."id" = "sessions"."workspace_id");--> statement-breakpoint
UPDATE "api_tokens" SET "revoked_at" = (extract(epoch from now()) * 1000)::bigint WHERE "revoked_at" IS NULL AND NOT EXISTS (SELECT 1 FROM "workspaces" w WHERE w."id" = "api_tokens"."workspace_id");--> statement-breakpoint
DELETE FROM "import_jobs" WHERE NOT EXISTS (SELECT 1 FROM "workspaces" w WHERE w."id" = "import_jobs"."workspace_id");--> statement-breakpoint
DELETE FROM "linktree_items" WHERE "linktree_id" IN (SELECT t."id" FROM "linktrees" t WHERE NOT EXISTS (SELECT 1 FROM "workspaces" w WHERE w."id" = t."workspace_id"))
  OR "link_id" IN (SELECT l."id" FROM "links" l WHERE NOT EXISTS (SELECT 1 FROM "workspaces" w WHERE w."id" = l."workspace_id"));--> statement-breakpoint
DELETE FROM "linktrees" WHERE NOT EXISTS (SELECT 1 FROM "workspaces" w WHERE w."id" = "linktrees"."workspace_id")
  OR "link_id" IN (SELECT l."id" FROM "links" l WHERE NOT EXISTS (SELECT 1 FROM "workspaces" w WHERE w."id" = l."workspace_id"));--> statement-breakpoint
DELETE FROM "links" WHERE NOT EXISTS (SELECT 1 FROM "workspaces" w WHERE w."id" = "links"."workspace_id");--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "links" ADD CONSTRAINT "links_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "linktrees" ADD CONSTRAINT "linktrees_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "import_jobs" ADD CONSTRAINT "import_jobs_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;
