import { parseArgs } from "node:util";
import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { users } from "../../db/schema";
import { AppError, isUniqueViolation, type ErrorCode } from "../domain/errors";
import { createUserWithWorkspace, normalizeEmail } from "../lib/users";
import { emailSchema } from "../routers/account/account.schema";
import { getAccount } from "../routers/account/account.service";
import { REPORT_STATUSES } from "../routers/reports/reports.schema";
import { listReports } from "../routers/reports/reports.service";
import { createToken } from "../routers/tokens/tokens.service";

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
  cli reports:list [--status open|dismissed|link_deleted]`;

const options = {
  email: { type: "string" },
  name: { type: "string" },
  plan: { type: "string" },
  admin: { type: "boolean" },
  status: { type: "string" },
} as const;

function parse(args: string[]) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new CommandError("USAGE", `${(e as Error).message}\n${USAGE}`);
  }
}

function email(value: string | undefined): string {
  const r = emailSchema.safeParse(value ?? "");
  if (!r.success) throw new CommandError("USAGE", `--email must be an e-mail address\n${USAGE}`);
  return normalizeEmail(r.data);
}

/**
 * The operator commands of decisions §2, on any database handle: the command line runs them
 * itself (PostgreSQL, or PGlite when no server holds the data directory) or asks the running
 * server to (embedded PGlite in use). Returns what is printed as JSON.
 */
export async function runAdminCommand(db: DbOrTx, args: string[]): Promise<unknown> {
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
    default:
      throw new CommandError("USAGE", command ? `unknown command ${command}\n${USAGE}` : USAGE);
  }
}

/** Domain errors (e.g. TOKEN_LIMIT_REACHED) keep their code; anything else is a plain failure. */
export function commandFailure(e: unknown): { error: string; message: string } {
  if (e instanceof CommandError) return { error: e.code, message: e.message };
  if (e instanceof AppError) return { error: e.publicCode, message: e.message };
  return { error: "INTERNAL_ERROR", message: e instanceof Error ? e.message : String(e) };
}
