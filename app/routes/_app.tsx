import type { LoaderFunctionArgs } from "@remix-run/node";
import { Outlet } from "@remix-run/react";
import { requireActor } from "../lib/session.server";

/** Every page below needs a signed-in browser session; others go to sign-in and come back. */
export async function loader({ context, request }: LoaderFunctionArgs) {
  await requireActor(context, request);
  return null;
}

export default function AppLayout() {
  return <Outlet />;
}
