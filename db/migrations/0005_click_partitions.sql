-- Hand-written: drizzle-kit cannot express partitioning (the snapshot is 0004's plus click_retention).
-- `clicks` becomes partitioned by month: RANGE on `ts`, which starts with the 13-digit ms
-- timestamp, so the primary key (link_id, ts) holds the partition key and stays global.
-- Old months are then dropped whole (CLICK_RETENTION_DAYS) while click_rollups keep their counts.
ALTER TABLE "clicks" RENAME TO "clicks_unpartitioned";
--> statement-breakpoint
ALTER TABLE "clicks_unpartitioned" RENAME CONSTRAINT "clicks_link_id_ts_pk" TO "clicks_unpartitioned_pk";
--> statement-breakpoint
CREATE TABLE "clicks" (
	"link_id" text COLLATE "C" NOT NULL,
	"ts" text COLLATE "C" NOT NULL,
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
	"visitor" text,
	CONSTRAINT "clicks_link_id_ts_pk" PRIMARY KEY("link_id","ts")
) PARTITION BY RANGE ("ts");
--> statement-breakpoint
-- Clicks of a month without its partition (far past or future) land here: an insert never fails.
CREATE TABLE "clicks_default" PARTITION OF "clicks" DEFAULT;
--> statement-breakpoint
-- The partition of the UTC month starting at `month` (its first day), named clicks_YYYY_MM; false
-- when it exists. Rows of that month already in clicks_default move into it. Instances running
-- it together take turns (transaction-level advisory lock).
CREATE FUNCTION clicks_ensure_month(month date) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	part text := 'clicks_' || to_char(month, 'YYYY_MM');
	lo text := lpad((extract(epoch FROM month::timestamp) * 1000)::bigint::text, 13, '0');
	hi text := lpad((extract(epoch FROM (month + interval '1 month')::timestamp) * 1000)::bigint::text, 13, '0');
BEGIN
	IF extract(day FROM month) <> 1 THEN
		RAISE EXCEPTION 'clicks_ensure_month: % is not the first day of a month', month;
	END IF;
	PERFORM pg_advisory_xact_lock(727275);
	IF to_regclass(part) IS NOT NULL THEN
		RETURN false;
	END IF;
	-- Rows of the month that went to the default partition would make the attach fail: moved first.
	LOCK TABLE clicks_default IN SHARE ROW EXCLUSIVE MODE;
	EXECUTE format('CREATE TABLE %I (LIKE clicks INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part);
	EXECUTE format('WITH moved AS (DELETE FROM clicks_default WHERE ts >= %L AND ts < %L RETURNING *) INSERT INTO %I SELECT * FROM moved', lo, hi, part);
	EXECUTE format('ALTER TABLE clicks ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', part, lo, hi);
	RETURN true;
END $$;
--> statement-breakpoint
-- A partition for every month of the existing clicks (at most two years back: older ones stay in
-- the default partition) and the next three months, then the data.
DO $$
DECLARE
	first_ms bigint;
	m date;
BEGIN
	SELECT min(left(ts, 13))::bigint INTO first_ms FROM clicks_unpartitioned;
	m := date_trunc('month', greatest(coalesce(to_timestamp(first_ms / 1000.0), now()), now() - interval '2 years') AT TIME ZONE 'UTC')::date;
	WHILE m <= (date_trunc('month', now() AT TIME ZONE 'UTC') + interval '3 months')::date LOOP
		PERFORM clicks_ensure_month(m);
		m := (m + interval '1 month')::date;
	END LOOP;
END $$;
--> statement-breakpoint
INSERT INTO "clicks" ("link_id", "ts", "workspace_id", "timestamp", "country", "region", "region_name", "city", "timezone", "lat", "lng", "device", "platform", "browser", "referer", "rule", "visitor")
SELECT "link_id", "ts", "workspace_id", "timestamp", "country", "region", "region_name", "city", "timezone", "lat", "lng", "device", "platform", "browser", "referer", "rule", "visitor" FROM "clicks_unpartitioned";
--> statement-breakpoint
DROP TABLE "clicks_unpartitioned";
--> statement-breakpoint
-- Retention's horizon: every click before `dropped_before` (ms) was dropped; its counts are the
-- hourly rollups'. One row, absent until the first drop.
CREATE TABLE "click_retention" (
	"id" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"dropped_before" bigint NOT NULL,
	CONSTRAINT "click_retention_one_row" CHECK ("click_retention"."id")
);
