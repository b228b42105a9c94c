import type { ActionFunctionArgs } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { attempt } from "../lib/errors.server";
import { requireActor, safeRedirect } from "../lib/session.server";

/** The header's workspace switch: this session acts in the chosen workspace from now on. */
export async function action({ context, request }: ActionFunctionArgs) {
  await requireActor(context, request);
  const form = await request.formData();
  const r = await attempt(request, () => context.caller.workspace.switch({ id: String(form.get("id") ?? "") }));
  // Not (or no longer) a member: the list says where one can go.
  if (!r.ok) throw redirect("/workspaces?switch=failed");
  const to = safeRedirect(form.get("redirectTo"), "/links");
  throw redirect(to.startsWith("/workspaces") ? `/workspaces/${r.value.workspace.id}` : to);
}

export const loader = () => redirect("/workspaces");
