import { z } from "zod";
import { text } from "../../lib/input";
import { IMPORT_FORMATS, MAPPING_FIELDS } from "./formats";

// 8 characters; jobs of earlier releases have 12.
export const JOB_ID_RE = /^(?:[0-9a-z]{8}|[0-9a-z]{12})$/;
/** A staged upload's file name: its owner (`<workspace id>-<user id>`, or `cli`), then random characters (imports.service `uploadName`). */
export const UPLOAD_RE = /^[0-9a-z]{1,64}(-[0-9a-z]{1,64})?-[0-9a-z]{24}\.csv$/;

export const formatSchema = z.enum(["auto", ...IMPORT_FORMATS]);
export const jobIdSchema = text().regex(JOB_ID_RE, "must be 8 characters of 0-9 and a-z");
export const uploadSchema = text().regex(UPLOAD_RE, "unknown upload");

const columnName = text().max(200);
export const mappingSchema = z
  .object(Object.fromEntries([...MAPPING_FIELDS, "slug_fallback"].map((f) => [f, columnName.optional()])) as Record<string, z.ZodOptional<z.ZodString>>)
  .strict();

export const inspectInput = z.object({ upload: uploadSchema, format: formatSchema.default("auto") }).strict();
/** What a row whose slug is taken does; `domain:<name>` names a verified domain of the workspace. */
export const onConflictSchema = text()
  .max(300)
  .regex(/^(reject|generate|domain:[0-9a-z.-]{1,253})$/, "must be reject, generate or domain:<a verified domain of this workspace>");
/** Where the source's title goes: the label people see (title), the share card's title (og_title), or nowhere. */
export const titleToSchema = z.enum(["title", "og_title", "ignore"]);

export const startInput = z
  .object({
    upload: uploadSchema,
    format: formatSchema.default("auto"),
    mapping: mappingSchema.optional(),
    on_conflict: onConflictSchema.default("reject"),
    title_to: titleToSchema.default("title"),
  })
  .strict();
/** POST /imports: the text of a CSV file and the choices of the dashboard's import. */
export const createImportInput = z
  .object({
    csv: text().min(1, "must be the text of a CSV file"),
    format: formatSchema.default("auto"),
    mapping: mappingSchema.optional(),
    on_conflict: onConflictSchema.default("reject"),
    title_to: titleToSchema.default("title"),
  })
  .strict();
export const jobInput = z.object({ id: jobIdSchema }).strict();

/** A refused row: its number, its slug and URL as the file gave them, the code and what is wrong. */
const rejectOutput = z.object({
  row: z.number().int(),
  error: z.string(),
  slug: z.string().optional(),
  url: z.string().optional(),
  fields: z.record(z.string(), z.array(z.string())).optional(),
});
/** A row whose slug was taken and that went in under another short URL. */
const movedOutput = z.object({ row: z.number().int(), slug: z.string(), url: z.string(), short_url: z.string() });

export const jobOutput = z.object({
  id: z.string(),
  status: z.enum(["queued", "running", "done", "failed"]),
  format: z.string(),
  mapping: z.record(z.string(), z.string()),
  rows: z.number().int().nullable(),
  rows_done: z.number().int(),
  created: z.number().int(),
  skipped: z.number().int(),
  rejected: z.number().int(),
  /** The first MAX_STORED_REJECTS rejected rows; `rejected` counts all of them. */
  rejects: z.array(rejectOutput),
  /** The first MAX_STORED_REJECTS rows that went in under a new short URL (their slug was taken). */
  moved: z.array(movedOutput),
  on_conflict: z.string(),
  title_to: titleToSchema,
  error: z.string().nullable(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
  finished_at: z.number().int().nullable(),
});
export type ImportJobDto = z.infer<typeof jobOutput>;

export const inspectionOutput = z.object({
  upload: z.string(),
  header: z.array(z.string()),
  rows: z.number().int(),
  preview: z.array(z.array(z.string())),
  detected: z.enum(IMPORT_FORMATS),
  format: z.enum(IMPORT_FORMATS),
  /** The default mapping of every format for this header row (the dashboard switches between them). */
  mappings: z.record(z.string(), z.record(z.string(), z.string())),
});
export type InspectionDto = z.infer<typeof inspectionOutput>;
