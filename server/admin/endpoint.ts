import { randomBytes, timingSafeEqual } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import express, { type NextFunction, type Request, type Response } from "express";
import type { AppServices } from "../core/services";
import { commandFailure, runAdminCommand } from "./commands";

/** Where the running server tells the command line how to reach it (DATA_DIR, mode 0600). */
export const ADMIN_FILE = "admin-endpoint.json";
export const ADMIN_PATH = "/_admin/cli";
export const ADMIN_SECRET_HEADER = "x-admin-secret";

export type AdminEndpointInfo = { pid: number; port: number; host: string; secret: string };

const portOf = (u: URL) => Number(u.port || (u.protocol === "https:" ? 443 : 80));
const LOOPBACK_RE = /^(::ffff:)?127\.\d+\.\d+\.\d+$|^::1$/;

export function readAdminEndpointInfo(dataDir: string): AdminEndpointInfo | null {
  try {
    return JSON.parse(readFileSync(path.join(dataDir, ADMIN_FILE), "utf8")) as AdminEndpointInfo;
  } catch {
    return null;
  }
}

/**
 * Writes (or keeps, when this process already wrote it) the endpoint file. The server calls it
 * before it opens the embedded database, so a command line started meanwhile finds this live
 * pid and waits for the endpoint instead of opening the data directory a second time.
 */
export function reserveAdminEndpoint(config: AppServices["config"]): AdminEndpointInfo {
  const current = readAdminEndpointInfo(config.dataDir);
  if (current && current.pid === process.pid) return current;
  const info: AdminEndpointInfo = { pid: process.pid, port: portOf(config.appUrl), host: config.appUrl.host, secret: randomBytes(32).toString("hex") };
  mkdirSync(config.dataDir, { recursive: true });
  writeFileSync(path.join(config.dataDir, ADMIN_FILE), JSON.stringify(info), { mode: 0o600 });
  return info;
}

/**
 * The command line's way into a running server whose embedded PGlite it cannot open a second
 * time (docs/decisions/002-pglite-as-the-default-database.md). Answers only on the loopback interface, only to direct connections (no
 * proxy headers), and only with the secret from DATA_DIR: whoever can read that file can open
 * the database anyway. Mount it on the APP origin before everything else.
 */
export function createAdminEndpoint(app: AppServices) {
  const { secret } = reserveAdminEndpoint(app.config);
  const expected = Buffer.from(secret);
  const json = express.json({ limit: 16 * 1024 });

  const refuse = (res: Response) => res.status(404).json({ error: "NOT_FOUND" });
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.path !== ADMIN_PATH) return next();
    const direct = LOOPBACK_RE.test(req.socket.remoteAddress ?? "") && !req.headers["x-forwarded-for"] && !req.headers.forwarded;
    const given = Buffer.from(String(req.headers[ADMIN_SECRET_HEADER] ?? ""));
    if (req.method !== "POST" || !direct || given.length !== expected.length || !timingSafeEqual(given, expected)) return refuse(res);
    json(req, res, async (err?: unknown) => {
      const args = (req.body as { args?: unknown } | undefined)?.args;
      if (err || !Array.isArray(args) || !args.every((a) => typeof a === "string")) {
        return res.status(400).json({ error: "USAGE", message: "body must be {args: string[]}" });
      }
      try {
        res.status(200).json({ output: await runAdminCommand(app.db, args, app.config) });
      } catch (e) {
        const failure = commandFailure(e);
        if (failure.error === "INTERNAL_ERROR") app.log.error({ err: e }, "admin command failed");
        res.status(failure.error === "INTERNAL_ERROR" ? 500 : 400).json(failure);
      }
    });
  };
}
