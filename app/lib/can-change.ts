import { useRouteLoaderData } from "@remix-run/react";

type AppLayoutData = { workspaces: { current: boolean; role: string }[] };

/**
 * False for a viewer of the current workspace, whose writes the service refuses: the pages leave out
 * the forms that would only end in that refusal. True outside the signed-in layout.
 */
export function useCanChange(): boolean {
  const data = useRouteLoaderData("routes/_app") as AppLayoutData | undefined;
  return data?.workspaces.find((w) => w.current)?.role !== "viewer";
}
