import path from "node:path";
import { z } from "zod";
import { AppError } from "../../domain/errors";
import { authedProcedure, router, contract } from "../../trpc/init";
import type { Actor } from "../../trpc/context";
import { inspectInput, inspectionOutput, jobInput, jobOutput, startInput } from "./imports.schema";
import {
  checkOptions,
  createImportJob,
  dashboardUploadOwner,
  getImportJob,
  inspectUpload,
  listImportJobs,
  prepareImport,
  uploadOwner,
  uploadsDir,
} from "./imports.service";
import { kickImportRunners } from "./runner";
import { FORMAT_LABELS, IMPORT_FORMATS, MAPPING_FIELDS, type Mapping } from "./formats";
import { IMPORT_MAX_BYTES } from "./csv-file";

/** An upload is its uploader's, in the workspace it was made in: anyone else's name answers like a missing one. */
function ownUpload(actor: Actor, upload: string): string {
  if (uploadOwner(upload) !== dashboardUploadOwner(actor.workspaceId, actor.userId))
    throw new AppError("VALIDATION_FAILED", { fields: { upload: ["is gone: upload the file again"] } });
  return upload;
}

// Dashboard procedures (no openapi meta): the upload itself is a multipart form of the dashboard,
// stored under DATA_DIR/imports/uploads before the page's action runs (server/http/dashboard-uploads.ts).
export const importRouter = router({
  /** What an uploaded file holds: header, row count, a preview, the recognised format, each format's mapping. */
  inspect: authedProcedure
    .meta({ scope: "links:write" })
    .input(inspectInput)
    .output(contract(inspectionOutput))
    .mutation(({ ctx, input }) => inspectUpload(ctx.app.config.dataDir, ownUpload(ctx.actor, input.upload), input.format)),

  /** Queues the import of an upload into the caller's workspace; the job runner takes it when the workspace's earlier imports are done. */
  start: authedProcedure
    .meta({ scope: "links:write" })
    .input(startInput)
    .output(contract(jobOutput))
    .mutation(async ({ ctx, input }) => {
      const file = path.join(uploadsDir(ctx.app.config.dataDir), ownUpload(ctx.actor, input.upload));
      const options = await checkOptions(ctx.app.db, ctx.actor.workspaceId, input);
      const prepared = await prepareImport(file, input.format, input.mapping as Mapping | undefined);
      const job = await createImportJob(
        { db: ctx.app.db, config: ctx.app.config },
        { workspaceId: ctx.actor.workspaceId, userId: ctx.actor.userId, upload: file, prepared, options },
      );
      kickImportRunners();
      return job;
    }),

  /** One import of the workspace, with its progress and report. */
  get: authedProcedure
    .meta({ scope: "links:read" })
    .input(jobInput)
    .output(contract(jobOutput))
    .query(({ ctx, input }) => getImportJob(ctx.app.db, ctx.actor.workspaceId, input.id)),

  /** The workspace's ten latest imports (without their reports). */
  list: authedProcedure
    .meta({ scope: "links:read" })
    .input(z.object({}).strict())
    .output(contract(z.object({ imports: z.array(jobOutput) })))
    .query(async ({ ctx }) => ({ imports: await listImportJobs(ctx.app.db, ctx.actor.workspaceId) })),

  /** What the import page offers: the formats it reads (with their names), the fields a column can feed, the largest file. */
  formats: authedProcedure
    .meta({ scope: "links:write" })
    .input(z.object({}).strict())
    .output(
      contract(
        z.object({
          formats: z.array(z.object({ id: z.enum(IMPORT_FORMATS), label: z.string() })),
          fields: z.array(z.enum(MAPPING_FIELDS)),
          max_bytes: z.number().int(),
        }),
      ),
    )
    .query(() => ({ formats: IMPORT_FORMATS.map((id) => ({ id, label: FORMAT_LABELS[id] })), fields: [...MAPPING_FIELDS], max_bytes: IMPORT_MAX_BYTES })),
});
