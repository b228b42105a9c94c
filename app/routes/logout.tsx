import type { ActionFunctionArgs } from "@remix-run/node";
import { redirect } from "@remix-run/node";

export async function action({ context }: ActionFunctionArgs) {
  try {
    await context.caller.auth.logout(); // clears the cookie through ctx.res
  } catch {
    // Already signed out: nothing to end.
  }
  throw redirect("/login");
}

export const loader = () => redirect("/");
