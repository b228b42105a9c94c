import type { AppLoadContext } from "@remix-run/node";
import { load } from "./errors.server";
import type { Range } from "./analytics";

/** Clicks of one link or of the whole workspace in a range, through the analytics routers. */
export async function fetchClicks(context: AppLoadContext, request: Request, linkId: string | null, range: Range) {
  const bounds = { ...(range.from !== null ? { from: String(range.from) } : {}), ...(range.to !== null ? { to: String(range.to) } : {}) };
  if (linkId) {
    const r = await load(request, () => context.caller.analytics.link({ id: linkId, ...bounds }));
    return { count: r.count, clicks: r.clicks.map((c) => ({ ...c, link_id: linkId })) };
  }
  return load(request, () => context.caller.analytics.workspace(bounds));
}
