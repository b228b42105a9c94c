CREATE TABLE "api_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"name" text NOT NULL,
	"prefix" text NOT NULL,
	"token_hash" text NOT NULL,
	"created_at" bigint NOT NULL,
	"last_used_at" bigint,
	"revoked_at" bigint
);
--> statement-breakpoint
CREATE TABLE "email_codes" (
	"id" text PRIMARY KEY NOT NULL,
	"email" text NOT NULL,
	"purpose" text NOT NULL,
	"user_id" text,
	"code_hash" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"expires_at" bigint NOT NULL,
	"used_at" bigint,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" bigint NOT NULL,
	"device" text,
	"browser" text,
	"platform" text,
	"country" text,
	"region_name" text,
	"city" text
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text PRIMARY KEY NOT NULL,
	"email" text NOT NULL,
	"name" text,
	"avatar_url" text,
	"workspace_id" text NOT NULL,
	"plan" text DEFAULT 'free' NOT NULL,
	"is_admin" boolean DEFAULT false NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workspaces" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "abuse_reports" (
	"id" text PRIMARY KEY NOT NULL,
	"link_id" text NOT NULL,
	"slug" text NOT NULL,
	"url" text NOT NULL,
	"reason" text NOT NULL,
	"detail" text,
	"email" text,
	"ip" text,
	"user_agent" text,
	"status" text DEFAULT 'open' NOT NULL,
	"created_at" bigint NOT NULL,
	"reviewed_at" bigint,
	"reviewed_by" text
);
--> statement-breakpoint
CREATE TABLE "click_rollups" (
	"link_id" text NOT NULL,
	"hour" bigint NOT NULL,
	"count" integer NOT NULL,
	CONSTRAINT "click_rollups_link_id_hour_pk" PRIMARY KEY("link_id","hour")
);
--> statement-breakpoint
CREATE TABLE "clicks" (
	"link_id" text NOT NULL,
	"ts" text NOT NULL,
	"workspace_id" text NOT NULL,
	"timestamp" bigint NOT NULL,
	"country" text,
	"region" text,
	"region_name" text,
	"city" text,
	"timezone" text,
	"lat" real,
	"lng" real,
	"device" text NOT NULL,
	"platform" text,
	"browser" text,
	"referer" text,
	"rule" text NOT NULL,
	CONSTRAINT "clicks_link_id_ts_pk" PRIMARY KEY("link_id","ts")
);
--> statement-breakpoint
CREATE TABLE "links" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"slug" text NOT NULL,
	"url" text NOT NULL,
	"kind" text DEFAULT 'link' NOT NULL,
	"tags" text[] DEFAULT '{}'::text[] NOT NULL,
	"expires_at" bigint,
	"expiration_url" text,
	"targeting" jsonb,
	"password_hash" text,
	"og_title" text,
	"og_description" text,
	"og_image" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"deleted_at" bigint
);
--> statement-breakpoint
CREATE TABLE "linktree_items" (
	"id" text PRIMARY KEY NOT NULL,
	"linktree_id" text NOT NULL,
	"link_id" text NOT NULL,
	"title" text NOT NULL,
	"position" integer NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "linktrees" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"link_id" text NOT NULL,
	"title" text NOT NULL,
	"bio" text,
	"avatar_url" text,
	"published" boolean DEFAULT false NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "slug_blocks" (
	"prefix" text PRIMARY KEY NOT NULL,
	"free" integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "email_codes" ADD CONSTRAINT "email_codes_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "linktree_items" ADD CONSTRAINT "linktree_items_linktree_id_linktrees_id_fk" FOREIGN KEY ("linktree_id") REFERENCES "public"."linktrees"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "linktree_items" ADD CONSTRAINT "linktree_items_link_id_links_id_fk" FOREIGN KEY ("link_id") REFERENCES "public"."links"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "linktrees" ADD CONSTRAINT "linktrees_link_id_links_id_fk" FOREIGN KEY ("link_id") REFERENCES "public"."links"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_tokens_hash_idx" ON "api_tokens" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "api_tokens_user_idx" ON "api_tokens" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "email_codes_email_idx" ON "email_codes" USING btree ("email","purpose");--> statement-breakpoint
CREATE INDEX "sessions_user_idx" ON "sessions" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "users_email_idx" ON "users" USING btree ("email");--> statement-breakpoint
CREATE INDEX "abuse_reports_status_idx" ON "abuse_reports" USING btree ("status","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "links_live_slug_idx" ON "links" USING btree ("slug") WHERE "links"."deleted_at" IS NULL;--> statement-breakpoint
CREATE INDEX "links_workspace_created_idx" ON "links" USING btree ("workspace_id","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "linktree_items_tree_idx" ON "linktree_items" USING btree ("linktree_id","position");--> statement-breakpoint
CREATE INDEX "linktrees_workspace_idx" ON "linktrees" USING btree ("workspace_id","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "linktrees_link_idx" ON "linktrees" USING btree ("link_id");--> statement-breakpoint
CREATE INDEX "slug_blocks_free_idx" ON "slug_blocks" USING btree ("prefix") WHERE "slug_blocks"."free" > 0;