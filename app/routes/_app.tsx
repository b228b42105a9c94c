import type { LoaderFunctionArgs } from "@remix-run/node";
import { Outlet, useLoaderData } from "@remix-run/react";
import { WorkspaceSwitcher } from "../components/WorkspaceSwitcher";
import { useCanChange } from "../lib/can-change";
import { load } from "../lib/errors.server";
import { requireActor } from "../lib/session.server";

/** Every page below needs a signed-in browser session; others go to sign-in and come back. */
export async function loader({ context, request }: LoaderFunctionArgs) {
  await requireActor(context, request);
  // The workspace the pages act in, and the others to switch to.
  return load(request, () => context.caller.workspace.list());
}

export default function AppLayout() {
  const { workspaces } = useLoaderData<typeof loader>();
  const viewer = !useCanChange();
  return (
    <>
      <WorkspaceSwitcher workspaces={workspaces} />
      {viewer ? (
        <p role="note" className="alert-info mb-4" data-testid="viewer-note">
          You are a viewer of this workspace: you can look at everything here, but not change it.
        </p>
      ) : null}
      <Outlet />
    </>
  );
}
