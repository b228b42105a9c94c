CREATE TABLE "click_day_values" (
	"workspace_id" text NOT NULL,
	"day" integer NOT NULL,
	"dim" text NOT NULL,
	"value" text NOT NULL,
	"detail" text NOT NULL,
	"clicks" integer NOT NULL,
	CONSTRAINT "click_day_values_workspace_id_day_dim_value_detail_pk" PRIMARY KEY("workspace_id","day","dim","value","detail")
);
--> statement-breakpoint
INSERT INTO "click_day_values" ("workspace_id", "day", "dim", "value", "detail", "clicks")
SELECT l."workspace_id", (c."timestamp" / 86400000)::int, v."dim", v."value", v."detail", count(*)::int
FROM "clicks" c JOIN "links" l ON l."id" = c."link_id" AND l."kind" = 'link'
CROSS JOIN LATERAL (VALUES
  ('link', c."link_id", ''), ('country', coalesce(c."country", ''), ''), ('city', coalesce(c."city", ''), coalesce(c."country", '')),
  ('device', c."device", ''), ('os', coalesce(c."platform", ''), ''), ('browser', coalesce(c."browser", ''), ''),
  ('referrer_domain', coalesce(lower(substring(c."referer" from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?([^/?#:]+)')), ''), ''),
  ('rule', c."rule", ''), ('trigger', c."trigger", '')
) v("dim", "value", "detail")
GROUP BY 1, 2, 3, 4, 5;
