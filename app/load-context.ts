import type { RemixLoadContext } from "../server/http/remix";

// Loaders and actions receive the server's load context (server/http/remix.ts).
// Declaration merging needs an interface; it adds no members of its own on purpose.
/* eslint-disable @typescript-eslint/no-empty-object-type */
declare module "@remix-run/node" {
  interface AppLoadContext extends RemixLoadContext {}
}
declare module "@remix-run/server-runtime" {
  interface AppLoadContext extends RemixLoadContext {}
}

export {};

// useLoaderData/useActionData types follow single fetch (remix.config future.v3_singleFetch).
declare module "@remix-run/node" {
  interface Future {
    v3_singleFetch: true;
  }
}
