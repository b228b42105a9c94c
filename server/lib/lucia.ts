import { DrizzlePostgreSQLAdapter } from "@lucia-auth/adapter-drizzle";
import { Lucia, TimeSpan } from "lucia";
import type { Config } from "../config";
import type { Db } from "../../db/client";
import { sessions, users } from "../../db/schema";

export const SESSION_COOKIE = "app_session";

export function createLucia(db: Db, config: Config) {
  return new Lucia(new DrizzlePostgreSQLAdapter(db as never, sessions, users), {
    // 30 days, sliding: lucia extends a session once half of it has passed.
    sessionExpiresIn: new TimeSpan(30, "d"),
    sessionCookie: {
      name: SESSION_COOKIE,
      expires: true,
      attributes: { secure: config.appUrl.protocol === "https:", sameSite: "lax", path: "/" },
    },
    getUserAttributes: (a) => ({ email: a.email, workspaceId: a.workspaceId, plan: a.plan, isAdmin: a.isAdmin }),
    getSessionAttributes: (a) => ({ createdAt: a.createdAt }),
  });
}

export type AppLucia = ReturnType<typeof createLucia>;

declare module "lucia" {
  interface Register {
    Lucia: AppLucia;
    DatabaseUserAttributes: { email: string; workspaceId: string; plan: "free" | "pro"; isAdmin: boolean };
    /** Written once at sign-in (what the Session record shows); the adapter maps keys to columns. */
    DatabaseSessionAttributes: {
      createdAt: number;
      device?: string | null;
      browser?: string | null;
      platform?: string | null;
      country?: string | null;
      regionName?: string | null;
      city?: string | null;
    };
  }
}
