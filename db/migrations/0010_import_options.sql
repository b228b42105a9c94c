DROP INDEX "domains_workspace_idx";--> statement-breakpoint
DROP INDEX "domains_name_idx";--> statement-breakpoint
ALTER TABLE "import_jobs" ADD COLUMN "moved" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "import_jobs" ADD COLUMN "options" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
-- Domains of a workspace deleted while they were being added (a race) are removed first, as the deletion would have.
DELETE FROM "domains" WHERE NOT EXISTS (SELECT 1 FROM "workspaces" w WHERE w."id" = "domains"."workspace_id");--> statement-breakpoint
ALTER TABLE "domains" ADD CONSTRAINT "domains_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "domains_verified_name_idx" ON "domains" USING btree ("name") WHERE "domains"."verified";--> statement-breakpoint
CREATE UNIQUE INDEX "domains_workspace_name_idx" ON "domains" USING btree ("workspace_id","name");--> statement-breakpoint
CREATE INDEX "domains_name_idx" ON "domains" USING btree ("name");