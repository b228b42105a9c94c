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

export async function createRemixHandler(app: AppServices): Promise<express.RequestHandler> {
  const buildFile = path.join(BUILD_DIR, "index.js");
  if (!existsSync(buildFile)) throw new Error(`Remix build missing at ${buildFile}: run npm run build`);
  const build = (await import(pathToFileURL(buildFile).href)) as ServerBuild;
  const router = express.Router();
  router.use("/build", express.static(path.resolve("public/build"), { immutable: true, maxAge: "1y" }));
  router.use(express.static(path.resolve("public"), { maxAge: "1h" }));
  router.all("*", createRequestHandler({ build, getLoadContext: (req, res) => remixContext(app, req, res) as never }));
  return router;
}
