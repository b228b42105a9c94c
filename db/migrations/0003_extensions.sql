CREATE TABLE "visitor_salts" (
	"day" text PRIMARY KEY NOT NULL,
	"salt" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "memberships" (
	"workspace_id" text NOT NULL,
	"user_id" text NOT NULL,
	"role" text NOT NULL,
	"joined_at" bigint NOT NULL,
	CONSTRAINT "memberships_workspace_id_user_id_pk" PRIMARY KEY("workspace_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "workspace_invites" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"email" text NOT NULL,
	"role" text NOT NULL,
	"token_hash" text NOT NULL,
	"invited_by" text,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"accepted_at" bigint,
	"revoked_at" bigint
);
--> statement-breakpoint
CREATE TABLE "domains" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"name" text NOT NULL,
	"verification_value" text NOT NULL,
	"verified" boolean DEFAULT false NOT NULL,
	"verified_at" bigint,
	"not_found_url" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "import_jobs" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"user_id" text NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"format" text NOT NULL,
	"mapping" jsonb,
	"source_path" text NOT NULL,
	"rows_total" integer,
	"rows_done" integer DEFAULT 0 NOT NULL,
	"created" integer DEFAULT 0 NOT NULL,
	"skipped" integer DEFAULT 0 NOT NULL,
	"rejected" integer DEFAULT 0 NOT NULL,
	"rejects" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"error" text,
	"lease_owner" text,
	"lease_until" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"finished_at" bigint
);
--> statement-breakpoint
DROP INDEX "links_live_slug_idx";--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "workspace_id" text;--> statement-breakpoint
-- Existing tokens act in their user's (personal) workspace, as they did before teams.
UPDATE "api_tokens" t SET "workspace_id" = u."workspace_id" FROM "users" u WHERE u."id" = t."user_id";--> statement-breakpoint
ALTER TABLE "api_tokens" ALTER COLUMN "workspace_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "workspace_id" text;--> statement-breakpoint
ALTER TABLE "workspaces" ADD COLUMN "personal" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "clicks" ADD COLUMN "visitor" text;--> statement-breakpoint
ALTER TABLE "links" ADD COLUMN "domain_id" text;--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workspace_invites" ADD CONSTRAINT "workspace_invites_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "memberships_user_idx" ON "memberships" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "workspace_invites_token_idx" ON "workspace_invites" USING btree ("token_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "workspace_invites_pending_idx" ON "workspace_invites" USING btree ("workspace_id","email") WHERE "workspace_invites"."accepted_at" IS NULL AND "workspace_invites"."revoked_at" IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "domains_name_idx" ON "domains" USING btree ("name");--> statement-breakpoint
CREATE INDEX "domains_workspace_idx" ON "domains" USING btree ("workspace_id","name");--> statement-breakpoint
CREATE INDEX "import_jobs_workspace_idx" ON "import_jobs" USING btree ("workspace_id","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "import_jobs_status_idx" ON "import_jobs" USING btree ("status");--> statement-breakpoint
CREATE INDEX "api_tokens_workspace_idx" ON "api_tokens" USING btree ("workspace_id");--> statement-breakpoint
CREATE UNIQUE INDEX "links_domain_slug_idx" ON "links" USING btree ("domain_id","slug") WHERE "links"."deleted_at" IS NULL AND "links"."domain_id" IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "links_live_slug_idx" ON "links" USING btree ("slug") WHERE "links"."deleted_at" IS NULL AND "links"."domain_id" IS NULL;--> statement-breakpoint
-- Every user's workspace becomes their personal workspace, with them as its owner; `public` has no members.
UPDATE "workspaces" w SET "personal" = true FROM "users" u WHERE u."workspace_id" = w."id";--> statement-breakpoint
INSERT INTO "memberships" ("workspace_id", "user_id", "role", "joined_at") SELECT "workspace_id", "id", 'owner', "created_at" FROM "users";--> statement-breakpoint
-- The generated namespace's free counts are those of the default domain only: branded domains have namespaces of their own.
CREATE OR REPLACE FUNCTION links_slug_blocks() RETURNS trigger AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.deleted_at IS NULL AND OLD.domain_id IS NULL THEN
    PERFORM slug_block_adjust(OLD.slug, 1);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.deleted_at IS NULL AND NEW.domain_id IS NULL THEN
    PERFORM slug_block_adjust(NEW.slug, -1);
  END IF;
  RETURN NULL;
END
$$ LANGUAGE plpgsql;--> statement-breakpoint
DROP TRIGGER "links_slug_blocks" ON "links";--> statement-breakpoint
CREATE TRIGGER links_slug_blocks AFTER INSERT OR DELETE OR UPDATE OF slug, deleted_at, domain_id ON links
FOR EACH ROW EXECUTE FUNCTION links_slug_blocks();