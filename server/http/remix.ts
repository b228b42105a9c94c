import path from "node:path";
import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import express from "express";
import { createRequestHandler } from "@remix-run/express";
import type { ServerBuild } from "@remix-run/node";
import type { AppServices } from "../services";
import { createCaller } from "../trpc/router";
import { createContextInner, type Context } from "../trpc/context";

export const BUILD_DIR = path.resolve("build");

/** What Remix loaders and actions get: the same routers, called server-side with the request's auth. */
export type RemixLoadContext = {
  app: AppServices;
  ctx: Context;
  caller: ReturnType<typeof createCaller>;
  /** The response's CSP nonce (securityHeaders), for Remix's inline scripts. */
  nonce: string;
};

export function remixContext(app: AppServices, req: express.Request, res: express.Response): RemixLoadContext {
  const ctx = createContextInner(
    app,
    { method: req.method, headers: req.headers, ip: req.ip ?? "" },
    {
      setHeader: (n, v) => void (!res.headersSent && res.setHeader(n, v)),
      appendHeader: (n, v) => void (!res.headersSent && res.appendHeader(n, v)),
    },
  );
  return { app, ctx, caller: createCaller(ctx), nonce: String(res.locals.cspNonce ?? "") };
}

const BUILD_FILE = path.join(BUILD_DIR, "index.js");

/** Fails fast (at start) when the dashboard was never built. */
export function assertRemixBuild(): void {
  if (!existsSync(BUILD_FILE)) throw new Error(`Remix build missing at ${BUILD_FILE}: run npm run build`);
}

let buildModule: Promise<ServerBuild> | undefined;
/** The Remix server build, imported once on first use (the dashboard and the linktree pages share it). */
export function loadRemixBuild(): Promise<ServerBuild> {
  assertRemixBuild();
  return (buildModule ??= import(pathToFileURL(BUILD_FILE).href) as Promise<ServerBuild>);
}

export async function createRemixHandler(app: AppServices): Promise<express.RequestHandler> {
  const build = await loadRemixBuild();
  const router = express.Router();
  router.use("/build", express.static(path.resolve("public/build"), { immutable: true, maxAge: "1y" }));
  router.use(express.static(path.resolve("public"), { maxAge: "1h" }));
  router.all("*", createRequestHandler({ build, getLoadContext: (req, res) => remixContext(app, req, res) as never }));
  return router;
}
