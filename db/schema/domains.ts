import { sql } from "drizzle-orm";
import { bigint, boolean, index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { workspaces } from "./accounts";

const ms = (name: string) => bigint(name, { mode: "number" });

/**
 * Branded domains, each with its own slug namespace. A name belongs to the one workspace that
 * verified it (DOMAIN_TAKEN for the others); before that, several workspaces may claim it, once
 * each, so a squatter's claim cannot keep the real owner out. Unverified claims lapse after 7 days.
 */
export const domains = pgTable(
  "domains",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    name: text("name").notNull(),
    /** The TXT value to publish at `_links-verify.<name>`: `links-verify=<24 base62>`. */
    verificationValue: text("verification_value").notNull(),
    verified: boolean("verified").notNull().default(false),
    verifiedAt: ms("verified_at"),
    notFoundUrl: text("not_found_url"),
    createdAt: ms("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("domains_verified_name_idx")
      .on(t.name)
      .where(sql`${t.verified}`),
    uniqueIndex("domains_workspace_name_idx").on(t.workspaceId, t.name),
    index("domains_name_idx").on(t.name),
  ],
);
