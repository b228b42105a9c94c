import { bigint, index, integer, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { workspaces } from "./accounts";

const ms = (name: string) => bigint(name, { mode: "number" });

/** A row the import refused: its number (1-based, header excluded), its slug and URL as the file gave them, and why. */
export type ImportReject = { row: number; error: string; fields?: Record<string, string[]>; slug?: string; url?: string };
/** A row whose slug was taken and that went in elsewhere (a new slug, or another domain), so people learn its new short URL. */
export type ImportMoved = { row: number; slug: string; url: string; short_url: string };
/** How a job treats a taken slug and where the source's title goes. */
export type ImportOptions = { on_conflict?: "reject" | "generate" | `domain:${string}`; title_to?: "title" | "og_title" | "ignore" };

/**
 * CSV imports as jobs: the job survives a restart and resumes after `rows_done`,
 * the number of data rows already decided (created, skipped or rejected) in a committed batch.
 */
export const importJobs = pgTable(
  "import_jobs",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull(),
    /** The API token that started the job, if one did (its audit event names it). */
    tokenId: text("token_id"),
    status: text("status", { enum: ["queued", "running", "done", "failed"] })
      .notNull()
      .default("queued"),
    format: text("format").notNull(),
    /** Column mapping: target field → source column name. */
    mapping: jsonb("mapping").$type<Record<string, string>>(),
    /** Where the uploaded file is kept until the job ends (under DATA_DIR). */
    sourcePath: text("source_path").notNull(),
    rowsTotal: integer("rows_total"),
    rowsDone: integer("rows_done").notNull().default(0),
    created: integer("created").notNull().default(0),
    skipped: integer("skipped").notNull().default(0),
    rejected: integer("rejected").notNull().default(0),
    rejects: jsonb("rejects").$type<ImportReject[]>().notNull().default([]),
    /** Rows that went in under another short URL than the file's (the first MAX_STORED_REJECTS). */
    moved: jsonb("moved").$type<ImportMoved[]>().notNull().default([]),
    options: jsonb("options").$type<ImportOptions>().notNull().default({}),
    error: text("error"),
    /** Instance holding the job, and until when (a crashed instance's lease runs out and another resumes). */
    leaseOwner: text("lease_owner"),
    leaseUntil: ms("lease_until"),
    createdAt: ms("created_at").notNull(),
    updatedAt: ms("updated_at").notNull(),
    finishedAt: ms("finished_at"),
  },
  (t) => [index("import_jobs_workspace_idx").on(t.workspaceId, t.createdAt.desc()), index("import_jobs_status_idx").on(t.status)],
);
