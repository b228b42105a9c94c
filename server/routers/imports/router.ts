import { rm } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { AppError } from "../../domain/errors";
import { authedProcedure, router, contract } from "../../trpc/init";
import type { Actor } from "../../trpc/context";
import type { AppServices } from "../../core/services";
import { createImportInput, inspectInput, inspectionOutput, jobInput, jobOutput, startInput } from "./imports.schema";
import {
  checkOptions,
  createImportJob,
  dashboardUploadOwner,
  getImportJob,
  inspectUpload,
  listImportJobs,
  prepareImport,
  stageText,
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

const TAG = "imports";

/** An import queued from a staged file (an upload, or a script's text): the runner takes it when the workspace's earlier imports are done. */
async function queueImport(app: AppServices, actor: Actor, file: string, input: z.output<typeof createImportInput> | z.output<typeof startInput>) {
  const options = await checkOptions(app.db, actor.workspaceId, input);
  const prepared = await prepareImport(file, input.format, input.mapping as Mapping | undefined);
  const job = await createImportJob(
    { db: app.db, config: app.config },
    { workspaceId: actor.workspaceId, userId: actor.userId, tokenId: actor.tokenId, upload: file, prepared, options },
  );
  kickImportRunners();
  return job;
}

// The dashboard's upload is a multipart form, stored under DATA_DIR/imports/uploads before the page's
// action runs (server/http/dashboard-uploads.ts); a script sends the file's text to POST /imports.
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
    .mutation(({ ctx, input }) => queueImport(ctx.app, ctx.actor, path.join(uploadsDir(ctx.app.config.dataDir), ownUpload(ctx.actor, input.upload)), input)),

  /** The same import for a script: the file's text in the body instead of an upload. */
  create: authedProcedure
    .meta({
      scope: "links:write",
      openapi: {
        method: "POST",
        path: "/imports",
        tags: [TAG],
        summary: "Import links from CSV",
        description:
          "Queues an import of `csv`, the text of a CSV file (a body is at most 64 KiB: a larger file goes in several calls, or through the dashboard " +
          "or `npm run cli -- links:import`). `format`: `auto` (default) recognises the exports of Bitly, Shlink, Kutt and YOURLS by their header " +
          "rows, else `generic`. Every row passes the checks of POST /links; a slug that already points to the same URL in the workspace is " +
          "skipped, a failing row is rejected with its code, the others go in. Answers the job (`queued`); GET /imports/{id} follows it.",
        protect: true,
      },
      successStatus: 201,
    })
    .input(createImportInput)
    .output(contract(jobOutput))
    .mutation(async ({ ctx, input }) => {
      const file = await stageText(ctx.app.config.dataDir, dashboardUploadOwner(ctx.actor.workspaceId, ctx.actor.userId), input.csv);
      try {
        return await queueImport(ctx.app, ctx.actor, file, input);
      } catch (e) {
        // What is wrong with the file is said of the member that carried it.
        if (e instanceof AppError && e.fields?.file) {
          const { file: problems, ...rest } = e.fields;
          throw new AppError(e.publicCode, { fields: { ...rest, csv: problems }, headers: e.headers });
        }
        throw e;
      } finally {
        await rm(file, { force: true }); // a queued job took it; a refused one leaves nothing behind
      }
    }),

  /** One import of the workspace, with its progress and report. */
  get: authedProcedure
    .meta({
      scope: "links:read",
      openapi: {
        method: "GET",
        path: "/imports/{id}",
        tags: [TAG],
        summary: "Get an import",
        description: "An import of the workspace: its status (`queued`, `running`, `done`, `failed`), progress, counts and rejected rows with their codes.",
        protect: true,
      },
    })
    .input(jobInput)
    .output(contract(jobOutput))
    .query(({ ctx, input }) => getImportJob(ctx.app.db, ctx.actor.workspaceId, input.id)),

  /** The workspace's ten latest imports (without their reports). */
  list: authedProcedure
    .meta({
      scope: "links:read",
      openapi: {
        method: "GET",
        path: "/imports",
        tags: [TAG],
        summary: "List imports",
        description: "The workspace's ten latest imports, newest first, without their rejected rows.",
        protect: true,
      },
    })
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
