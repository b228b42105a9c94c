CREATE TABLE "click_visitor_hours" (
	"workspace_id" text NOT NULL,
	"day" integer NOT NULL,
	"dim" text NOT NULL,
	"value" text NOT NULL,
	"hour" integer NOT NULL,
	"firsts" integer NOT NULL,
	"lasts" integer NOT NULL,
	CONSTRAINT "click_visitor_hours_workspace_id_day_dim_value_hour_pk" PRIMARY KEY("workspace_id","day","dim","value","hour")
);
--> statement-breakpoint
ALTER TABLE "click_visitor_countries" ADD COLUMN "prior_hours" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "click_visitor_days" ADD COLUMN "prior_hours" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
INSERT INTO "click_visitor_hours" ("workspace_id", "day", "dim", "value", "hour", "firsts", "lasts")
SELECT x."workspace_id", x."day", x."dim", x."value", e."hour", sum(e."f")::int, sum(e."l")::int FROM (
  SELECT "workspace_id", "day", 'total' AS "dim", '' AS "value", "hours" FROM "click_visitor_days"
  UNION ALL SELECT "workspace_id", "day", 'country', "country", "hours" FROM "click_visitor_countries"
) x CROSS JOIN LATERAL (VALUES
  (CASE WHEN x."hours" <> 0 THEN 24 - length(rtrim(x."hours"::bit(24)::text, '0')) END, 1, 0),
  (CASE WHEN x."hours" <> 0 THEN 24 - position('1' in x."hours"::bit(24)::text) END, 0, 1)
) e("hour", "f", "l")
WHERE e."hour" IS NOT NULL GROUP BY 1, 2, 3, 4, 5;
