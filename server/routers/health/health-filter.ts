import { sql, type SQL } from "drizzle-orm";
import { links } from "../../../db/schema";

/**
 * Links whose destination health is `status`, as a condition on `links` (the REST list's `health`
 * filter). A link never checked, or without a row yet, is `unknown`.
 */
export function healthIs(status: "ok" | "broken" | "unknown"): SQL {
  if (status === "unknown") return sql`not exists (select 1 from link_health h where h.link_id = ${links.id} and h.status <> 'unknown')`;
  return sql`exists (select 1 from link_health h where h.link_id = ${links.id} and h.status = ${status})`;
}
