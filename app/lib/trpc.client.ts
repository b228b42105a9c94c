import { createTRPCProxyClient, httpBatchLink } from "@trpc/client";
// Types only: no server code reaches the browser bundle.
import type { AppRouter } from "../../server/routers";

let client: ReturnType<typeof createTRPCProxyClient<AppRouter>> | null = null;

/** The typed client on `${API_URL}/trpc`; the browser sends the session cookie. */
export function trpc(apiUrl: string) {
  client ??= createTRPCProxyClient<AppRouter>({
    links: [httpBatchLink({ url: `${apiUrl}/trpc`, fetch: (url, init) => fetch(url, { ...(init as RequestInit), credentials: "include" }) })],
  });
  return client;
}

/** The public error code of a failed call (the server's errorFormatter puts it in `data.error`). */
export function errorCode(e: unknown): string {
  const data = (e as { data?: { error?: string } })?.data;
  return data?.error ?? "INTERNAL_ERROR";
}
