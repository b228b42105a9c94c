import { z } from "zod";
import { text } from "../../lib/input";
import { IMPORT_FORMATS, MAPPING_FIELDS } from "./formats";

export const JOB_ID_RE = /^[0-9a-z]{12}$/;
/** A staged upload's file name: the uploader's user id, then random characters (imports.service `stageName`). */
export const UPLOAD_RE = /^[0-9a-z]{1,64}-[0-9a-z]{24}\.csv$/;

export const formatSchema = z.enum(["auto", ...IMPORT_FORMATS]);
export const jobIdSchema = text().regex(JOB_ID_RE, "must be 12 characters of 0-9 and a-z");
export const uploadSchema = text().regex(UPLOAD_RE, "unknown upload");

const columnName = text().max(200);
export const mappingSchema = z
  .object(Object.fromEntries([...MAPPING_FIELDS, "slug_fallback"].map((f) => [f, columnName.optional()])) as Record<string, z.ZodOptional<z.ZodString>>)
  .strict();

export const inspectInput = z.object({ upload: uploadSchema, format: formatSchema.default("auto") }).strict();
export const startInput = z.object({ upload: uploadSchema, format: formatSchema.default("auto"), mapping: mappingSchema.optional() }).strict();
export const jobInput = z.object({ id: jobIdSchema }).strict();

const rejectOutput = z.object({ row: z.number().int(), error: z.string(), fields: z.record(z.string(), z.array(z.string())).optional() });

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
