import path from "node:path";
import { parseArgs } from "node:util";
import { eq } from "drizzle-orm";
import { migrate, type Database, type Db, type DbOrTx } from "../../db/client";
import { importJobs, users } from "../../db/schema";
import { parseConfig, type Config } from "../config";
import { AppError, isUniqueViolation, type ErrorCode } from "../domain/errors";
import { messageFor } from "../domain/error-messages";
import { SCOPES, isScope, type Scope } from "../domain/scopes";
import { createUserWithWorkspace, normalizeEmail } from "../lib/users";
import { emailSchema } from "../routers/account/account.schema";
import { getAccount } from "../routers/account/account.service";
import { REPORT_STATUSES } from "../routers/reports/reports.schema";
import { listReports } from "../routers/reports/reports.service";
import { createToken } from "../routers/tokens/tokens.service";
import { tokenEvents, writeAuditEvents } from "../trpc/audit";
import { IMPORT_FORMATS } from "../routers/imports/formats";
import { JOB_ID_RE, UPLOAD_RE, type ImportJobDto } from "../routers/imports/imports.schema";
import { checkOptions, createImportJob, getImportJob, importWorkspace, prepareImport, uploadsDir } from "../routers/imports/imports.service";
import { kickImportRunners } from "../routers/imports/runner";
import { createBackup, operatorPath, restoreBackup } from "./backup";
import { deleteUser, listUsers, OperatorError, pendingMigrations, revokeTokenById } from "./operations";

/** A failure the command line prints as `{"error": code, "message"}` and exits non-zero on. */
export class CommandError extends Error {
  constructor(
    readonly code: ErrorCode | "USAGE",
    message: string,
  ) {
    super(message);
  }
}

/** Ends every usage error: the message stays one line, and the full usage is one command away. */
export const SEE_HELP = " (npm run cli -- --help lists the commands and their options)";

/** The commands an operator may type, with the options each one needs (checked before any database is opened). */
const COMMANDS: Record<string, readonly string[]> = {
  "user:create": ["email"],
  "token:create": ["email"],
  "user:list": [],
  "user:delete": ["email"],
  "token:revoke": ["id"],
  "reports:list": [],
  "backup:create": ["out"],
  "backup:restore": ["in"],
  "db:migrate": [],
  "links:import": ["email", "file"],
  // links:import's steps through a running server (server/cli.ts asks them of it).
  "links:import:queue": ["email", "upload"],
  "links:import:status": ["job"],
};

/**
 * A wrong command line, found before anything is opened: an unknown option or command, a missing
 * argument or required option, a stray argument. Throws USAGE naming it in one line.
 */
export function checkUsage(args: string[]): void {
  const { values, positionals } = parse(args);
  const [command, ...extra] = positionals;
  if (!command) throw new CommandError("USAGE", `no command given${SEE_HELP}`);
  const required = COMMANDS[command];
  if (!required) throw new CommandError("USAGE", `unknown command ${command}${SEE_HELP}`);
  if (extra.length) throw new CommandError("USAGE", `unexpected argument ${extra[0]}${SEE_HELP}`);
  const missing = required.find((o) => values[o as keyof typeof values] === undefined);
  if (missing) throw new CommandError("USAGE", `${command} needs --${missing}${SEE_HELP}`);
  if (command.startsWith("links:import")) {
    importFormat(values.format);
    importChoices(values["on-conflict"], values["title-to"]);
  }
}

export const USAGE = `usage:
  cli user:create --email a@b.c [--name N] [--plan free|pro] [--admin]
  cli token:create --email a@b.c [--name N] [--scopes links:read,analytics:read,…] (absent: every scope)
  cli user:list
  cli user:delete --email a@b.c
  cli token:revoke --id TOKEN_ID
  cli reports:list [--status open|dismissed|link_deleted]
  cli backup:create --out FILE.jsonl.gz
  cli backup:restore --in FILE.jsonl.gz   (into an empty database, every server stopped)
  cli db:migrate [--dry-run]
  cli links:import --email a@b.c --file links.csv [--format auto|${IMPORT_FORMATS.join("|")}] [--workspace ID] [--on-conflict reject|generate|domain:<name>] [--title-to title|og_title|ignore]`;

/** `cli --help`: what each command does, for an operator at a shell. */
export const HELP = `Operator command line of the link service: npm run cli -- <command> [options]

It reads the server's environment variables (DATABASE_URL, DATA_DIR, …). With DATABASE_URL it
connects to PostgreSQL; on the embedded database it asks the running server, or opens DATA_DIR
itself when no server holds it. Answers are JSON on stdout; a failure is one line
{"error": CODE, "message": …} on stderr, with exit code 1 (2 for a wrong command line: an unknown
command or option, a missing or stray argument).

${USAGE}

  user:list         every user: id, e-mail, plan, admin flag
  user:delete       removes a user as deleting their account does (links, tokens, sessions)
  token:revoke      revokes an API token by its id (the id in token:create's record)
  backup:create     a consistent gzipped snapshot of every table while the service runs
  backup:restore    restores a backup into an empty database migrated to the same version
  db:migrate        applies the pending migrations (--dry-run: lists them); servers also do at start

  --help            this text
  --version         the version`;

const options = {
  email: { type: "string" },
  name: { type: "string" },
  scopes: { type: "string" },
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
  id: { type: "string" },
  out: { type: "string" },
  in: { type: "string" },
  "dry-run": { type: "boolean" },
} as const;

export function parse(args: string[]) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true, tokens: true });
  } catch (e) {
    // node's own words ("Unknown option '--x'. To specify a positional argument starting with a '-'…"): the first sentence.
    throw new CommandError("USAGE", `${(e as Error).message.split(". ")[0].replace(/\.$/, "")}${SEE_HELP}`);
  }
  // An option given twice would silently take its last value: which one was meant is the operator's to say.
  const seen = new Set<string>();
  for (const t of parsed.tokens) {
    if (t.kind !== "option") continue;
    if (seen.has(t.name)) throw new CommandError("USAGE", `--${t.name} is given more than once${SEE_HELP}`);
    seen.add(t.name);
  }
  return { values: parsed.values, positionals: parsed.positionals };
}

export function email(value: string | undefined): string {
  const r = emailSchema.safeParse(value ?? "");
  if (!r.success) throw new CommandError("USAGE", `--email must be an e-mail address${SEE_HELP}`);
  return normalizeEmail(r.data);
}

/**
 * The operator commands (users, plans, tokens, abuse review), on any database handle: the command line runs them
 * itself (PostgreSQL, or PGlite when no server holds the data directory) or asks the running
 * server to (embedded PGlite in use). Returns what is printed as JSON.
 */
export async function runAdminCommand(db: DbOrTx, args: string[], config?: Config, database?: Database): Promise<unknown> {
  const { values, positionals } = parse(args);
  const [command, ...extra] = positionals;
  if (extra.length) throw new CommandError("USAGE", `unexpected argument ${extra[0]}${SEE_HELP}`);
  switch (command) {
    case "user:create": {
      const plan = values.plan ?? "free";
      if (plan !== "free" && plan !== "pro") throw new CommandError("USAGE", `--plan must be free or pro${SEE_HELP}`);
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
      // Made and logged together, as the user making it in the dashboard would be.
      return db.transaction(async (tx) => {
        const made = await createToken(tx, user.id, values.name?.trim() || "cli", undefined, tokenScopes(values.scopes));
        const changes = values.scopes === undefined ? ["name"] : ["name", "scopes"];
        await writeAuditEvents(tx, { userId: user.id }, await tokenEvents(tx, made.record.id, "token.created", changes));
        return made;
      });
    }
    case "user:list":
      return listUsers(db);
    case "user:delete":
      return deleteUser(db as Db, email(values.email));
    case "token:revoke":
      if (!values.id) throw new CommandError("USAGE", `--id is required${SEE_HELP}`);
      return revokeTokenById(db as Db, values.id);
    case "backup:create":
      if (!values.out) throw new CommandError("USAGE", `--out is required${SEE_HELP}`);
      return createBackup(db as Db, operatorPath(values.out));
    case "backup:restore":
      if (!values.in) throw new CommandError("USAGE", `--in is required${SEE_HELP}`);
      // A server holding the embedded database would keep caches of the database it had before.
      if (!database) throw new OperatorError("SERVICE_UNAVAILABLE", "a server holds this DATA_DIR: stop it, then restore");
      return restoreBackup(db as Db, operatorPath(values.in));
    case "db:migrate": {
      const pending = await pendingMigrations(db);
      if (values["dry-run"]) return { pending };
      if (!pending.length) return { applied: [] };
      // The server migrates at start; one holding the embedded database applies them when restarted.
      if (!database) throw new OperatorError("SERVICE_UNAVAILABLE", `a server holds this DATA_DIR: restart it to apply ${pending.join(", ")}`);
      await migrate(database);
      return { applied: pending };
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
      throw new CommandError("USAGE", `links:import reads a local file: run it from the command line${SEE_HELP}`);
    default:
      throw new CommandError("USAGE", command ? `unknown command ${command}${SEE_HELP}` : `no command given${SEE_HELP}`);
  }
}

/**
 * `--scopes a,b`: each must be a known scope (repeats count once). Absent: undefined, the classic token with
 * every scope; an empty value: a token with no scope, which can still read GET /account.
 */
export function tokenScopes(value: string | undefined): Scope[] | undefined {
  if (value === undefined) return undefined;
  const asked = value.trim() === "" ? [] : value.split(",").map((s) => s.trim());
  const unknown = asked.filter((s) => !isScope(s));
  if (unknown.length)
    throw new CommandError("USAGE", `--scopes: unknown ${unknown.map((s) => JSON.stringify(s)).join(", ")}; a scope is one of ${SCOPES.join(", ")}${SEE_HELP}`);
  return [...new Set(asked as Scope[])];
}

export const importFormat = (value: string | undefined) => {
  const format = value ?? "auto";
  if (format !== "auto" && !(IMPORT_FORMATS as readonly string[]).includes(format)) {
    throw new CommandError("USAGE", `--format must be auto or one of ${IMPORT_FORMATS.join(", ")}${SEE_HELP}`);
  }
  return format as "auto" | (typeof IMPORT_FORMATS)[number];
};

/** --on-conflict and --title-to written as the usage says (whether the domain named is the workspace's is the import's to say). */
export function importChoices(onConflict: string | undefined, titleTo: string | undefined): void {
  if (onConflict !== undefined && !/^(reject|generate|domain:.+)$/.test(onConflict))
    throw new CommandError("USAGE", `--on-conflict must be reject, generate or domain:<name>${SEE_HELP}`);
  if (titleTo !== undefined && !["title", "og_title", "ignore"].includes(titleTo))
    throw new CommandError("USAGE", `--title-to must be title, og_title or ignore${SEE_HELP}`);
}

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
  if (!o.upload || !UPLOAD_RE.test(o.upload)) throw new CommandError("USAGE", `--upload must name a file in DATA_DIR/imports/uploads${SEE_HELP}`);
  const format = importFormat(o.format);
  importChoices(o.onConflict, o.titleTo);
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
  if (!id || !JOB_ID_RE.test(id)) throw new CommandError("USAGE", `--job must be an import job id${SEE_HELP}`);
  const [job] = await db.select({ workspaceId: importJobs.workspaceId }).from(importJobs).where(eq(importJobs.id, id));
  if (!job) throw new CommandError("NOT_FOUND", "no import job with this id");
  return getImportJob(db, job.workspaceId, id);
}

/** Domain errors (e.g. TOKEN_LIMIT_REACHED) keep their code, with the sentence for it when they carry none; anything else is a plain failure. */
export function commandFailure(e: unknown): { error: string; message: string } {
  if (e instanceof CommandError) return { error: e.code, message: e.message };
  if (e instanceof AppError) return { error: e.publicCode, message: e.message === e.publicCode ? messageFor(e.publicCode) : e.message };
  if (e instanceof OperatorError) return { error: e.code, message: e.message };
  return { error: "INTERNAL_ERROR", message: e instanceof Error ? e.message : String(e) };
}
