CREATE TABLE "link_health" (
	"link_id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"status" text DEFAULT 'unknown' NOT NULL,
	"checked_at" bigint,
	"http_status" integer,
	"error" text,
	"destinations" jsonb,
	"failures" integer DEFAULT 0 NOT NULL,
	"next_check_at" bigint NOT NULL,
	"lease_until" bigint
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"webhook_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	"event" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"response_status" integer,
	"last_attempt_at" bigint,
	"next_attempt_at" bigint,
	"lease_until" bigint,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhooks" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"url" text NOT NULL,
	"events" text[] NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"secret" text NOT NULL,
	"disabled_reason" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "audit_events" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"at" bigint NOT NULL,
	"actor_user_id" text,
	"actor_email" text,
	"actor_token_id" text,
	"action" text NOT NULL,
	"target_type" text NOT NULL,
	"target_id" text,
	"changes" jsonb
);
--> statement-breakpoint
ALTER TABLE "clicks" ADD COLUMN "variant" smallint;--> statement-breakpoint
ALTER TABLE "clicks" ADD COLUMN "trigger" text DEFAULT 'link' NOT NULL;--> statement-breakpoint
ALTER TABLE "links" ADD COLUMN "forward_query" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "links" ADD COLUMN "variants" jsonb;--> statement-breakpoint
ALTER TABLE "links" ADD COLUMN "archived_at" bigint;--> statement-breakpoint
ALTER TABLE "linktree_items" ADD COLUMN "kind" text DEFAULT 'link' NOT NULL;--> statement-breakpoint
ALTER TABLE "linktree_items" ADD COLUMN "starts_at" bigint;--> statement-breakpoint
ALTER TABLE "linktree_items" ADD COLUMN "ends_at" bigint;--> statement-breakpoint
ALTER TABLE "linktrees" ADD COLUMN "theme" text;--> statement-breakpoint
ALTER TABLE "linktrees" ADD COLUMN "colors" jsonb;--> statement-breakpoint
ALTER TABLE "linktrees" ADD COLUMN "button_style" text;--> statement-breakpoint
ALTER TABLE "linktrees" ADD COLUMN "socials" jsonb;--> statement-breakpoint
ALTER TABLE "linktrees" ADD COLUMN "domain_id" text;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_webhook_id_webhooks_id_fk" FOREIGN KEY ("webhook_id") REFERENCES "public"."webhooks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "link_health_due_idx" ON "link_health" USING btree ("next_check_at");--> statement-breakpoint
CREATE INDEX "link_health_workspace_status_idx" ON "link_health" USING btree ("workspace_id","status");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("next_attempt_at") WHERE "webhook_deliveries"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_webhook_idx" ON "webhook_deliveries" USING btree ("webhook_id","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "webhooks_workspace_idx" ON "webhooks" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE INDEX "audit_events_workspace_idx" ON "audit_events" USING btree ("workspace_id","at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "audit_events_at_idx" ON "audit_events" USING btree ("at");