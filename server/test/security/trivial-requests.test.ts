import net from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { http } from "../harness";
import { createUserWithWorkspace, issueToken } from "../../lib/users";
import { startLoggedServer, type LoggedServer } from "./servers";

/**
 * Trivial requests (a raw backslash in an API path, a cross-site form post, an unknown dashboard
 * page) answer a 4xx in the error shape, never a 500, and the process writes JSON log lines only:
 * nothing on stderr, no stack. Remix runs in production mode here, where its default error handler
 * printed each 404 with an 11-line stack.
 */
let s: LoggedServer;
let token: string;
const printed: string[] = [];
const previousNodeEnv = process.env.NODE_ENV;

beforeAll(async () => {
  process.env.NODE_ENV = "production";
  s = await startLoggedServer({ remix: true });
  const user = await createUserWithWorkspace(s.app.db, { email: "trivial@example.com" });
  token = (await issueToken(s.app.db, user.id, "test")).token;
  const keep =
    (name: string) =>
    (...args: unknown[]) =>
      void printed.push(`${name}: ${args.map(String).join(" ")}`);
  vi.spyOn(console, "error").mockImplementation(keep("console.error"));
  vi.spyOn(console, "warn").mockImplementation(keep("console.warn"));
  vi.spyOn(console, "log").mockImplementation(keep("console.log"));
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: unknown) => (printed.push(`stderr: ${String(chunk)}`), true));
}, 60_000);
afterAll(async () => {
  vi.restoreAllMocks();
  process.env.NODE_ENV = previousNodeEnv;
  await s?.close();
});

/** One request as written, byte for byte (fetch would turn `\` into `/` before sending). */
function raw(port: number, head: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(head));
    let out = "";
    socket.on("data", (d) => (out += d));
    socket.on("error", reject);
    socket.on("close", () => resolve({ status: Number(out.split(" ")[1]), body: out.slice(out.indexOf("\r\n\r\n") + 4) }));
  });
}

const errorLines = () => s.lines.filter((l) => JSON.parse(l).level >= 50);

describe("trivial requests", () => {
  it("a raw backslash in an API path answers 404 NOT_FOUND in the error shape, never a 500", async () => {
    const port = Number(new URL(s.api).port);
    const auth = `Authorization: Bearer ${token}\r\n`;
    for (const path of ["/api/links/\\", "/api/links/abcd\\123", "/api/links\\x", "/api/linktrees/abcdefgh\\/items"]) {
      const r = await raw(port, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${auth}Connection: close\r\n\r\n`);
      expect(r.status, `${path}: ${r.body}`).toBeLessThan(500);
      expect(r.status, path).toBeGreaterThanOrEqual(400);
      expect(typeof JSON.parse(r.body).error, path).toBe("string");
    }
    expect(errorLines()).toEqual([]);
    expect(printed).toEqual([]);
  });

  it("a cross-origin dashboard POST answers 403 FORBIDDEN, with no stack anywhere", async () => {
    for (const origin of ["https://evil.example", "null", "http://["]) {
      const r = await http(`${s.appUrl}/login`, {
        method: "POST",
        headers: { origin, "content-type": "application/x-www-form-urlencoded" },
        body: "email=a%40example.com",
      });
      expect(r.status, `Origin ${origin}: ${r.text}`).toBe(403);
      expect(r.json, `Origin ${origin}`).toEqual({ error: "FORBIDDEN" });
    }
    // The same form from the dashboard's own origin still goes through.
    const same = await http(`${s.appUrl}/login`, {
      method: "POST",
      headers: { origin: s.appUrl, "content-type": "application/x-www-form-urlencoded" },
      body: "email=a%40example.com",
    });
    expect(same.status, same.text).not.toBe(403);
    expect(same.status, same.text).toBeLessThan(500);
    expect(errorLines()).toEqual([]);
    expect(printed).toEqual([]);
  });

  it("an unknown dashboard page answers 404 and logs JSON lines only, no stack", async () => {
    const before = s.lines.length;
    for (let i = 0; i < 3; i++) expect((await http(`${s.appUrl}/no-such-page-${i}`)).status).toBe(404);
    const lines = s.lines.slice(before);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      const entry = JSON.parse(line);
      expect(entry.level, line).toBeLessThan(50);
      expect(line).not.toMatch(/\bat .*:\d+:\d+/);
    }
    expect(printed).toEqual([]);
  });
});
