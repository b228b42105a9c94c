import { stat } from "node:fs/promises";
import path from "node:path";
import type express from "express";
import {
  MaxPartSizeExceededError,
  unstable_createFileUploadHandler,
  unstable_createMemoryUploadHandler,
  unstable_parseMultipartFormData,
} from "@remix-run/node";
import type { AppServices } from "../core/services";
import { toPublicError } from "../domain/errors";
import { AVATAR_MAX_BYTES, AVATAR_SIZE, LINKTREE_AVATAR_SIZE, storeAvatar } from "../lib/avatars";
import { logFailure } from "../lib/log";
import { IMPORT_MAX_BYTES, IMPORT_MAX_MB } from "../routers/imports/csv-file";
import { stageUpload } from "../routers/imports/imports.service";
import type { FormBodyRequest } from "./app";
import { dashboardContext, sessionActor } from "./dashboard-files";
import { sendError } from "./rest";

const IMPORT_PATH = /^\/links\/import(\.data)?\/?$/;
const SETTINGS_PATH = /^\/settings(\.data)?\/?$/;
/** A linktree's editor: its avatar form. */
const LINKTREE_PATH = /^\/linktrees\/[^/]+?(\.data)?\/?$/;

/**
 * The dashboard's file forms (the CSV import's upload on /links/import, the avatars on /settings
 * and on a linktree's editor) are stored here, by the services, before the page's action runs: the action then
 * receives a plain form saying what became of the file (`step=uploaded` with `upload` and `format`, or `avatar_url`,
 * or `upload_error` with its status) and goes on through the procedures, so the dashboard build
 * never holds the file stores. A file form needs the browser's session: 401 without one, 403
 * SESSION_REQUIRED for an API token. Runs after formBodies, which bounds both bodies.
 */
export function dashboardUploads(app: AppServices) {
  return async (req: FormBodyRequest, res: express.Response, next: express.NextFunction) => {
    const type = (req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
    const form =
      req.method === "POST" && type === "multipart/form-data"
        ? IMPORT_PATH.test(req.path)
          ? "import"
          : SETTINGS_PATH.test(req.path)
            ? "avatar"
            : LINKTREE_PATH.test(req.path)
              ? "linktreeAvatar"
              : null
        : null;
    if (!form) return next();
    try {
      const ctx = dashboardContext(app, req, res);
      res.locals.dashboardContext = ctx; // the page's action goes on with the same auth
      const actor = await sessionActor(ctx);
      const fields =
        form === "import"
          ? { step: "uploaded", ...(await stageImport(app, req, actor)) }
          : await storeAvatarForm(app, req, form === "linktreeAvatar" ? LINKTREE_AVATAR_SIZE : AVATAR_SIZE);
      handOn(req, fields);
      next();
    } catch (e) {
      const pub = toPublicError(e);
      if (pub.status >= 500) logFailure(app, e, "dashboard upload failed", { path: req.path });
      req.resume();
      res.setHeader("Connection", "close");
      sendError(res, pub);
    }
  };
}

/** The multipart body as a web request, for Remix's form parser (the streamed import or the bounded avatar form). */
function multipartRequest(req: FormBodyRequest): Request {
  const body = req.formStream ?? req.formBody ?? null;
  return new Request("http://dashboard.invalid/", {
    method: "POST",
    headers: { "content-type": req.headers["content-type"] ?? "" },
    body,
    ...(req.formStream ? { duplex: "half" } : {}),
  } as RequestInit);
}

const failed = (e: unknown, status = 200) => {
  const pub = toPublicError(e);
  return { upload_error: JSON.stringify({ error: pub.body.error, fields: "fields" in pub.body ? pub.body.fields : {} }), upload_status: String(status) };
};
const fieldFailure = (field: string, message: string) => ({
  upload_error: JSON.stringify({ error: "VALIDATION_FAILED", fields: { [field]: [message] } }),
  upload_status: "200",
});

/**
 * Step 1 of an import: the file goes straight to DATA_DIR/imports/uploads as it arrives, if the
 * disk has room for it (else 507 INSUFFICIENT_STORAGE); it replaces the workspace's upload that
 * waited for its mapping, if any.
 */
async function stageImport(app: AppServices, req: FormBodyRequest, actor: { workspaceId: string; userId: string }): Promise<Record<string, string>> {
  const declared = Number(req.headers["content-length"]) || IMPORT_MAX_BYTES;
  let staged: { dir: string; name: string };
  try {
    staged = await stageUpload(app.config.dataDir, { workspaceId: actor.workspaceId, userId: actor.userId, bytes: declared });
  } catch (e) {
    if (toPublicError(e).body.error !== "INSUFFICIENT_STORAGE") throw e;
    return failed(e, 507);
  }
  let form: FormData;
  try {
    form = await unstable_parseMultipartFormData(
      multipartRequest(req),
      unstable_createFileUploadHandler({ directory: staged.dir, file: () => staged.name, maxPartSize: IMPORT_MAX_BYTES, avoidFileConflicts: false }),
    );
  } catch (e) {
    if (e instanceof MaxPartSizeExceededError) return fieldFailure("file", `is larger than ${IMPORT_MAX_MB} MB`);
    return fieldFailure("file", "could not be read: send the form again");
  }
  // The file part is stored under the fresh name we gave it, so the disk says whether one came. Its
  // FormData entry cannot say: Node 24's FormData turns the handler's file object into a string.
  if (form.get("file") === null || !(await isFile(path.join(staged.dir, staged.name)))) return fieldFailure("file", "choose a CSV file");
  return { upload: staged.name, format: String(form.get("format") ?? "auto") };
}

/** An avatar: checked by its content and stored as size×size WebP; the page's action then sets its URL. */
async function storeAvatarForm(app: AppServices, req: FormBodyRequest, size: number): Promise<Record<string, string>> {
  if (req.avatarTooLarge) return { intent: "avatar", ...fieldFailure("avatar", "must be at most 2 MB") };
  let form: FormData;
  try {
    form = await unstable_parseMultipartFormData(multipartRequest(req), unstable_createMemoryUploadHandler({ maxPartSize: AVATAR_MAX_BYTES }));
  } catch (e) {
    if (e instanceof MaxPartSizeExceededError) return { intent: "avatar", ...fieldFailure("avatar", "must be at most 2 MB") };
    return { intent: "avatar", ...fieldFailure("avatar", "could not be read: send the form again") };
  }
  const file = form.get("avatar");
  if (!(file instanceof Blob)) return { intent: "avatar", ...fieldFailure("avatar", "choose an image file") };
  try {
    const name = await storeAvatar(app.config.dataDir, new Uint8Array(await file.arrayBuffer()), size);
    return { intent: "avatar", avatar_url: `${app.config.appUrl.href.replace(/\/+$/, "")}/uploads/avatars/${name}` };
  } catch (e) {
    if (toPublicError(e).status >= 500) throw e;
    return { intent: "avatar", ...failed(e) };
  }
}

/** Remix reads the outcome as an ordinary urlencoded form. */
function handOn(req: FormBodyRequest, fields: Record<string, string>) {
  const body = Buffer.from(new URLSearchParams(fields).toString());
  req.formStream = undefined;
  req.formBody = body;
  req.headers["content-type"] = "application/x-www-form-urlencoded";
  req.headers["content-length"] = String(body.length);
  delete req.headers["transfer-encoding"];
}

const isFile = (file: string) =>
  stat(file).then(
    (s) => s.isFile(),
    () => false,
  );
