ALTER TABLE "click_visitor_countries" ADD COLUMN "hours" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
UPDATE "click_visitor_countries" v SET "hours" = s."hours"
FROM (
  SELECT l."workspace_id", (c."timestamp" / 86400000)::int AS "day", coalesce(c."country", '') AS "country", c."visitor",
    bit_or(1 << ((c."timestamp" / 3600000) % 24)::int) AS "hours"
  FROM "clicks" c JOIN "links" l ON l."id" = c."link_id" AND l."kind" = 'link' WHERE c."visitor" IS NOT NULL GROUP BY 1, 2, 3, 4
) s
WHERE v."workspace_id" = s."workspace_id" AND v."day" = s."day" AND v."country" = s."country" AND v."visitor" = s."visitor";
