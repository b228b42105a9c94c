import type { RemixLoadContext } from "../server/http/remix";

// Loaders and actions receive the server's load context (server/http/remix.ts).
declare module "@remix-run/node" {
  // eslint-disable-next-line @typescript-eslint/no-empty-interface
  interface AppLoadContext extends RemixLoadContext {}
}
declare module "@remix-run/server-runtime" {
  // eslint-disable-next-line @typescript-eslint/no-empty-interface
  interface AppLoadContext extends RemixLoadContext {}
}

export {};

// useLoaderData/useActionData types follow single fetch (remix.config future.v3_singleFetch).
declare module "@remix-run/node" {
  interface Future {
    v3_singleFetch: true;
  }
}
