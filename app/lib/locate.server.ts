import type { AppLoadContext } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { attempt, load } from "./errors.server";

type LocateType = "link" | "linktree" | "domain";

/**
 * A dashboard page of one object (a link, a linktree, a domain) opened while the session is in
 * another of the user's workspaces, e.g. from a teammate's address: when `get` answers 404 here,
 * the workspace that holds it is looked up among the user's own; if there is one, the session
 * switches there and the same address opens again with `switched=<workspace name>` for the page's
 * notice. Otherwise `get`'s own error stands (an object of a workspace one is not in stays 404).
 */
export async function loadAcrossWorkspaces<T>(context: AppLoadContext, request: Request, type: LocateType, id: string, get: () => Promise<T>): Promise<T> {
  const first = await attempt(request, get);
  if (first.ok) return first.value;
  if (first.error.error === "NOT_FOUND" && id) {
    const found = await attempt(request, () => context.caller.workspace.locate({ type, id }));
    if (found.ok) {
      const switched = await attempt(request, () => context.caller.workspace.switch({ id: found.value.workspace_id }));
      if (switched.ok) {
        const url = new URL(request.url);
        url.searchParams.set("switched", found.value.personal ? "Personal" : (found.value.name ?? "Untitled workspace"));
        throw redirect(url.pathname + url.search);
      }
    }
  }
  return load(request, get);
}
