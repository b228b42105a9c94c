-- Byte-order ("C") collation for keys whose order or equality is structural, not linguistic.
-- `clicks.ts` is `<13-digit ms>#<random>`: analytics ranges rely on '#' sorting below [0-9a-z],
-- which a locale collation (e.g. en_US, where punctuation is ignored at first level) breaks.
-- Byte comparison is also cheaper on every btree insert of the click pipeline.
ALTER TABLE "clicks" ALTER COLUMN "link_id" TYPE text COLLATE "C", ALTER COLUMN "ts" TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE "click_rollups" ALTER COLUMN "link_id" TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE "slug_blocks" ALTER COLUMN "prefix" TYPE text COLLATE "C";
--> statement-breakpoint
-- The slug trigger names the column, so it is recreated around the type change.
DROP TRIGGER links_slug_blocks ON links;
--> statement-breakpoint
ALTER TABLE "links" ALTER COLUMN "slug" TYPE text COLLATE "C";
--> statement-breakpoint
CREATE TRIGGER links_slug_blocks AFTER INSERT OR DELETE OR UPDATE OF slug, deleted_at ON links
FOR EACH ROW EXECUTE FUNCTION links_slug_blocks();
