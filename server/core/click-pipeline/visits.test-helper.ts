import { count, eq, sum } from "drizzle-orm";
import { clickRollups, clicks } from "../../../db/schema";
import { PEOPLE } from "../../redirect/ua-fixtures";
import type { AppServices } from "../services";
import type { Visit } from "./types";

/** Visit `i` of a link of the public workspace, from a Mac's Safari on this machine, with no edge's headers. */
export const visit = (linkId: string, i = 0, over: Partial<Visit> = {}): Visit => ({
  linkId,
  workspaceId: "public",
  timestamp: Date.now() + i,
  userAgent: PEOPLE.macSafari,
  ip: "127.0.0.1",
  referer: null,
  rule: "url",
  edge: null,
  ...over,
});

/** A link's clicks as stored: its rows (`stored`) and the sum of its hourly rollups (`rolled`). `app()`: the file's app, once made. */
export const clickCounts = (app: () => AppServices) => ({
  stored: async (linkId: string) => {
    const { db } = app();
    const [{ n }] = await db.select({ n: count() }).from(clicks).where(eq(clicks.linkId, linkId));
    return Number(n);
  },
  rolled: async (linkId: string) => {
    const { db } = app();
    const [{ n }] = await db
      .select({ n: sum(clickRollups.count) })
      .from(clickRollups)
      .where(eq(clickRollups.linkId, linkId));
    return Number(n ?? 0);
  },
});
