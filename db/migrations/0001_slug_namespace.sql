-- The workspace that owns links created without authentication.
INSERT INTO "workspaces" ("id", "name", "created_at") VALUES ('public', 'public', (extract(epoch from now()) * 1000)::bigint);
--> statement-breakpoint
-- One row per 3-character prefix of the generated 4-character namespace, 36 free slugs each.
INSERT INTO "slug_blocks" ("prefix", "free")
SELECT a || b || c, 36
FROM unnest(string_to_array('0123456789abcdefghijklmnopqrstuvwxyz', NULL)) a,
     unnest(string_to_array('0123456789abcdefghijklmnopqrstuvwxyz', NULL)) b,
     unnest(string_to_array('0123456789abcdefghijklmnopqrstuvwxyz', NULL)) c;
--> statement-breakpoint
CREATE FUNCTION slug_block_adjust(s text, delta int) RETURNS void AS $$
BEGIN
  IF s ~ '^[0-9a-z]{4}$' THEN
    UPDATE slug_blocks SET free = free + delta WHERE prefix = substr(s, 1, 3);
  END IF;
END
$$ LANGUAGE plpgsql;
--> statement-breakpoint
-- Keeps slug_blocks exact whatever code path inserts, renames, soft-deletes or removes a link.
CREATE FUNCTION links_slug_blocks() RETURNS trigger AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.deleted_at IS NULL THEN
    PERFORM slug_block_adjust(OLD.slug, 1);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.deleted_at IS NULL THEN
    PERFORM slug_block_adjust(NEW.slug, -1);
  END IF;
  RETURN NULL;
END
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER links_slug_blocks AFTER INSERT OR DELETE OR UPDATE OF slug, deleted_at ON links
FOR EACH ROW EXECUTE FUNCTION links_slug_blocks();
