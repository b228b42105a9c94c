CREATE TABLE "health_digests" (
	"workspace_id" text PRIMARY KEY NOT NULL,
	"sent_day" text NOT NULL,
	"reported_until" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "link_health" ADD COLUMN "broken_at" bigint;--> statement-breakpoint
ALTER TABLE "health_digests" ADD CONSTRAINT "health_digests_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
UPDATE "link_health" SET "broken_at" = "checked_at" WHERE "status" = 'broken';
