import path from "node:path";
import { parseArgs } from "node:util";
import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { importJobs, users } from "../../db/schema";
import { parseConfig, type Config } from "../config";
import { AppError, isUniqueViolation, type ErrorCode } from "../domain/errors";
import { createUserWithWorkspace, normalizeEmail } from "../lib/users";
import { emailSchema } from "../routers/account/account.schema";
import { getAccount } from "../routers/account/account.service";
import { REPORT_STATUSES } from "../routers/reports/reports.schema";
import { listReports } from "../routers/reports/reports.service";
import { createToken } from "../routers/tokens/tokens.service";
import { IMPORT_FORMATS } from "../routers/imports/formats";
import { JOB_ID_RE, UPLOAD_RE, type ImportJobDto } from "../routers/imports/imports.schema";
import { checkOptions, createImportJob, getImportJob, importWorkspace, prepareImport, uploadsDir } from "../routers/imports/imports.service";
import { kickImportRunners } from "../routers/imports/runner";

/** A failure the command line prints as `{"error": code, "message"}` and exits non-zero on. */
export class CommandError extends Error {
  constructor(
    readonly code: ErrorCode | "USAGE",
    message: string,
  ) {
    super(message);
  }
}

export const USAGE = `usage:
  cli user:create --email a@b.c [--name N] [--plan free|pro] [--admin]
  cli token:create --email a@b.c [--name N]
  cli reports:list [--status open|dismissed|link_deleted]
  cli links:import --email a@b.c --file links.csv [--format auto|${IMPORT_FORMATS.join("|")}] [--workspace ID] [--on-conflict reject|generate|domain:<name>] [--title-to title|og_title|ignore]`;

const options = {
  email: { type: "string" },
  name: { type: "string" },
  plan: { type: "string" },
  admin: { type: "boolean" },
  status: { type: "string" },
  file: { type: "string" },
  format: { type: "string" },
  workspace: { type: "string" },
  "on-conflict": { type: "string" },
  "title-to": { type: "string" },
  // links:import's steps through a running server (server/cli.ts): the upload's name, the job.
  upload: { type: "string" },
  job: { type: "string" },
} as const;

export function parse(args: string[]) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new CommandError("USAGE", `${(e as Error).message}\n${USAGE}`);
  }
}

export function email(value: string | undefined): string {
  const r = emailSchema.safeParse(value ?? "");
  if (!r.success) throw new CommandError("USAGE", `--email must be an e-mail address\n${USAGE}`);
  return normalizeEmail(r.data);
}

/**
 * The operator commands (users, plans, tokens, abuse review), on any database handle: the command line runs them
 * itself (PostgreSQL, or PGlite when no server holds the data directory) or asks the running
 * server to (embedded PGlite in use). Returns what is printed as JSON.
 */
export async function runAdminCommand(db: DbOrTx, args: string[], config?: Config): Promise<unknown> {
  const { values, positionals } = parse(args);
  const [command, ...extra] = positionals;
  if (extra.length) throw new CommandError("USAGE", `unexpected argument ${extra[0]}\n${USAGE}`);
  switch (command) {
    case "user:create": {
      const plan = values.plan ?? "free";
      if (plan !== "free" && plan !== "pro") throw new CommandError("USAGE", `--plan must be free or pro\n${USAGE}`);
      try {
        const user = await createUserWithWorkspace(db, { email: email(values.email), name: values.name ?? null, plan, isAdmin: values.admin ?? false });
        const account = await getAccount(db, user.id);
        return { ...account, user: { ...account.user, plan: user.plan, is_admin: user.isAdmin } };
      } catch (e) {
        if (isUniqueViolation(e, "users_email_idx")) throw new CommandError("EMAIL_IN_USE", "a user with this e-mail exists");
        throw e;
      }
    }
    case "token:create": {
      const [user] = await db
        .select({ id: users.id })
        .from(users)
        .where(eq(users.email, email(values.email)));
      if (!user) throw new CommandError("NOT_FOUND", "no user with this e-mail");
      return createToken(db, user.id, values.name?.trim() || "cli");
    }
    case "reports:list": {
      const status = values.status as (typeof REPORT_STATUSES)[number] | undefined;
      if (status !== undefined && !REPORT_STATUSES.includes(status)) throw new CommandError("USAGE", `--status must be one of ${REPORT_STATUSES.join(", ")}`);
      return { reports: await listReports(db, status) };
    }
    case "links:import:queue": {
      // The running server's half of `links:import` (the command line copied the file into DATA_DIR).
      const job = await queueImport(db, config ?? parseConfig(), {
        email: values.email,
        upload: values.upload,
        format: values.format,
        workspace: values.workspace,
        onConflict: values["on-conflict"],
        titleTo: values["title-to"],
      });
      kickImportRunners();
      return job;
    }
    case "links:import:status":
      return importStatus(db, values.job);
    case "links:import":
      throw new CommandError("USAGE", `links:import reads a local file: run it from the command line\n${USAGE}`);
    default:
      throw new CommandError("USAGE", command ? `unknown command ${command}\n${USAGE}` : USAGE);
  }
}

export const importFormat = (value: string | undefined) => {
  const format = value ?? "auto";
  if (format !== "auto" && !(IMPORT_FORMATS as readonly string[]).includes(format)) {
    throw new CommandError("USAGE", `--format must be auto or one of ${IMPORT_FORMATS.join(", ")}\n${USAGE}`);
  }
  return format as "auto" | (typeof IMPORT_FORMATS)[number];
};

/**
 * Makes the import job of an upload in DATA_DIR/imports/uploads for the user with this e-mail, in
 * their own workspace or the one given (they must be a member). `leaseOwner`: the caller runs the
 * job itself (the command line on PostgreSQL, or on PGlite with no server running).
 */
export async function queueImport(
  db: DbOrTx,
  config: Config,
  o: { email?: string; upload?: string; format?: string; workspace?: string; leaseOwner?: string; onConflict?: string; titleTo?: string },
): Promise<ImportJobDto> {
  if (!o.upload || !UPLOAD_RE.test(o.upload)) throw new CommandError("USAGE", `--upload must name a file in DATA_DIR/imports/uploads\n${USAGE}`);
  const format = importFormat(o.format);
  const [user] = await db
    .select({ id: users.id })
    .from(users)
    .where(eq(users.email, email(o.email)));
  if (!user) throw new CommandError("NOT_FOUND", "no user with this e-mail");
  const workspaceId = await importWorkspace(db, user.id, o.workspace).catch(() => {
    throw new CommandError("NOT_FOUND", `no workspace ${o.workspace} of this user`);
  });
  const options = await checkOptions(db, workspaceId, { on_conflict: o.onConflict, title_to: o.titleTo });
  const file = path.join(uploadsDir(config.dataDir), o.upload);
  const prepared = await prepareImport(file, format);
  return createImportJob({ db, config }, { workspaceId, userId: user.id, upload: file, prepared, leaseOwner: o.leaseOwner, options });
}

async function importStatus(db: DbOrTx, id: string | undefined): Promise<ImportJobDto> {
  if (!id || !JOB_ID_RE.test(id)) throw new CommandError("USAGE", `--job must be an import job id\n${USAGE}`);
  const [job] = await db.select({ workspaceId: importJobs.workspaceId }).from(importJobs).where(eq(importJobs.id, id));
  if (!job) throw new CommandError("NOT_FOUND", "no import job with this id");
  return getImportJob(db, job.workspaceId, id);
}

/** Domain errors (e.g. TOKEN_LIMIT_REACHED) keep their code; anything else is a plain failure. */
export function commandFailure(e: unknown): { error: string; message: string } {
  if (e instanceof CommandError) return { error: e.code, message: e.message };
  if (e instanceof AppError) return { error: e.publicCode, message: e.message };
  return { error: "INTERNAL_ERROR", message: e instanceof Error ? e.message : String(e) };
}
