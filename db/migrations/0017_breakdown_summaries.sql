CREATE TABLE "click_day_visitors" (
	"workspace_id" text NOT NULL,
	"day" integer NOT NULL,
	"dim" text NOT NULL,
	"value" text NOT NULL,
	"visitors" integer NOT NULL,
	CONSTRAINT "click_day_visitors_workspace_id_day_dim_value_pk" PRIMARY KEY("workspace_id","day","dim","value")
);
--> statement-breakpoint
CREATE TABLE "click_hour_countries" (
	"workspace_id" text NOT NULL,
	"hour" bigint NOT NULL,
	"country" text NOT NULL,
	"clicks" integer NOT NULL,
	CONSTRAINT "click_hour_countries_workspace_id_hour_country_pk" PRIMARY KEY("workspace_id","hour","country")
);
--> statement-breakpoint
CREATE TABLE "click_visitor_countries" (
	"workspace_id" text NOT NULL,
	"day" integer NOT NULL,
	"country" text NOT NULL,
	"visitor" text NOT NULL,
	CONSTRAINT "click_visitor_countries_workspace_id_day_country_visitor_pk" PRIMARY KEY("workspace_id","day","country","visitor")
);
--> statement-breakpoint
CREATE TABLE "click_visitor_days" (
	"workspace_id" text NOT NULL,
	"day" integer NOT NULL,
	"visitor" text NOT NULL,
	"hours" integer NOT NULL,
	CONSTRAINT "click_visitor_days_workspace_id_day_visitor_pk" PRIMARY KEY("workspace_id","day","visitor")
);
--> statement-breakpoint
INSERT INTO "click_hour_countries" ("workspace_id", "hour", "country", "clicks")
SELECT l."workspace_id", (c."timestamp" / 3600000) * 3600000, coalesce(c."country", ''), count(*)::int
FROM "clicks" c JOIN "links" l ON l."id" = c."link_id" AND l."kind" = 'link' GROUP BY 1, 2, 3;
--> statement-breakpoint
INSERT INTO "click_visitor_days" ("workspace_id", "day", "visitor", "hours")
SELECT l."workspace_id", (c."timestamp" / 86400000)::int, c."visitor", bit_or(1 << ((c."timestamp" / 3600000) % 24)::int)
FROM "clicks" c JOIN "links" l ON l."id" = c."link_id" AND l."kind" = 'link' WHERE c."visitor" IS NOT NULL GROUP BY 1, 2, 3;
--> statement-breakpoint
INSERT INTO "click_visitor_countries" ("workspace_id", "day", "country", "visitor")
SELECT DISTINCT l."workspace_id", (c."timestamp" / 86400000)::int, coalesce(c."country", ''), c."visitor"
FROM "clicks" c JOIN "links" l ON l."id" = c."link_id" AND l."kind" = 'link' WHERE c."visitor" IS NOT NULL;
--> statement-breakpoint
INSERT INTO "click_day_visitors" ("workspace_id", "day", "dim", "value", "visitors")
SELECT "workspace_id", "day", 'total', '', count(*)::int FROM "click_visitor_days" GROUP BY 1, 2
UNION ALL
SELECT "workspace_id", "day", 'country', "country", count(*)::int FROM "click_visitor_countries" GROUP BY 1, 2, 4;
