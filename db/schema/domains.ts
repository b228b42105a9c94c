import { bigint, boolean, index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";

const ms = (name: string) => bigint(name, { mode: "number" });

/** Branded domains (extensions §2). `name` is unique across all workspaces (DOMAIN_TAKEN); each has its own slug namespace. */
export const domains = pgTable(
  "domains",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull(),
    name: text("name").notNull(),
    /** The TXT value to publish at `_links-verify.<name>`: `links-verify=<24 base62>`. */
    verificationValue: text("verification_value").notNull(),
    verified: boolean("verified").notNull().default(false),
    verifiedAt: ms("verified_at"),
    notFoundUrl: text("not_found_url"),
    createdAt: ms("created_at").notNull(),
  },
  (t) => [uniqueIndex("domains_name_idx").on(t.name), index("domains_workspace_idx").on(t.workspaceId, t.name)],
);
