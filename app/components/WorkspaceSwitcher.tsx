import { Form, Link, useLocation } from "@remix-run/react";

export type WorkspaceItem = { id: string; name: string | null; role: "owner" | "member" | "viewer"; personal: boolean; current: boolean; members: number };

/** How a workspace is named to people: the personal one says so. */
export function workspaceLabel(w: Pick<WorkspaceItem, "name" | "personal">): string {
  if (w.personal) return w.name ? `${w.name} (personal)` : "Personal";
  return w.name ?? "Untitled workspace";
}

/**
 * The bar above every signed-in page: which workspace the pages act in, a switch to another one
 * (a plain form: works without JavaScript, and choosing in the list changes nothing until "Switch"),
 * and the way to its members and to a new workspace.
 */
export function WorkspaceSwitcher({ workspaces }: { workspaces: WorkspaceItem[] }) {
  const { pathname } = useLocation();
  const current = workspaces.find((w) => w.current) ?? workspaces[0];
  if (!current) return null;
  // Back to the same section after a switch: the record on screen belongs to the old workspace.
  const section = "/" + (pathname.split("/")[1] || "links");
  return (
    <nav
      aria-label="Current workspace"
      className="mb-6 flex flex-wrap items-center gap-x-3 gap-y-2 rounded-lg border border-slate-200 bg-white px-3 py-2 dark:border-slate-800 dark:bg-slate-900"
      data-testid="workspace-switcher"
    >
      {workspaces.length > 1 ? (
        <Form method="post" action="/workspaces/switch" className="flex w-full min-w-0 items-center gap-2 sm:w-auto sm:flex-1" key={current.id}>
          <label htmlFor="workspace-switch" className="shrink-0 text-sm font-medium text-slate-700 dark:text-slate-200">
            Workspace
          </label>
          <select id="workspace-switch" name="id" defaultValue={current.id} className="input min-w-0 flex-1 sm:max-w-xs">
            {workspaces.map((w) => (
              <option key={w.id} value={w.id}>
                {workspaceLabel(w)}
              </option>
            ))}
          </select>
          <input type="hidden" name="redirectTo" value={section === "/workspaces" ? "/workspaces" : section} />
          <button type="submit" className="btn-secondary shrink-0">
            Switch
          </button>
        </Form>
      ) : (
        <p className="min-w-0 flex-1 truncate text-sm">
          <span className="font-medium text-slate-700 dark:text-slate-200">Workspace:</span> {workspaceLabel(current)}
        </p>
      )}
      <div className="flex flex-wrap items-center gap-3 text-sm">
        {current.personal ? null : <Link to={`/workspaces/${current.id}`}>Members ({current.members})</Link>}
        <Link to="/workspaces">{workspaces.length > 1 ? "All workspaces" : "New workspace"}</Link>
      </div>
    </nav>
  );
}
