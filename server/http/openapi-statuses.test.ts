import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer } from "../test/harness";
import { issueToken } from "../lib/users";
import { ERROR_STATUS } from "../domain/errors";

/**
 * Every status the API answers is declared in /openapi.json: each operation of the document is
 * called the ways a client gets wrong (no credential, a wrong or unscoped token, unknown ids, a
 * stray parameter, a body that is not JSON or too large) and with its own request example, and
 * every answer's status must be one the operation declares, with an error code of that status.
 */
let t: TestServer;
let doc: any;
beforeAll(async () => {
  t = await createTestServer();
  doc = (await http(`${t.api}/openapi.json`)).json;
});
afterAll(() => t?.close());

type Call = { why: string; headers?: Record<string, string>; body?: string; query?: string; ids?: string };

describe("/openapi.json declares every status the API answers", () => {
  it("for every operation, the answers to wrong and to example requests have declared statuses and codes", async () => {
    const user = await t.user({ plan: "pro" });
    const { token: unscoped } = await issueToken(t.app.db, user.id, "no scope", undefined, []);
    const json = { "content-type": "application/json" };
    const undeclared: string[] = [];
    const seen = new Set<number>();
    for (const [path, item] of Object.entries(doc.paths) as [string, any][]) {
      for (const [method, op] of Object.entries(item) as [string, any][]) {
        if (!["get", "post", "patch", "put", "delete"].includes(method)) continue;
        const example = op.requestBody?.content?.["application/json"]?.example;
        const hasBody = method !== "get" && method !== "delete";
        const calls: Call[] = [
          { why: "no credential" },
          { why: "unknown token", headers: { authorization: "Bearer tok_00000000000000000000000000000000" } },
          { why: "token without scopes", headers: { authorization: `Bearer ${unscoped}` } },
          { why: "unknown ids", headers: user.auth, ids: "zzzzzzzz" },
          { why: "malformed ids", headers: user.auth, ids: "NOT-AN-ID" },
          { why: "unknown parameter", headers: user.auth, query: "?nope=1" },
          { why: "example", headers: { ...user.auth, ...json }, body: example === undefined ? undefined : JSON.stringify(example) },
        ];
        if (hasBody) {
          calls.push({ why: "text body", headers: { ...user.auth, "content-type": "text/plain" }, body: "hello" });
          calls.push({ why: "body over 64 KiB", headers: { ...user.auth, ...json }, body: JSON.stringify({ url: "x".repeat(70_000) }) });
          calls.push({ why: "body not an object", headers: { ...user.auth, ...json }, body: "[1]" });
        }
        for (const call of calls) {
          const url = path.replace(/\{[^}]+\}/g, call.ids ?? "abcd1234") + (call.query ?? "");
          const res = await http(`${t.api}${url}`, { method: method.toUpperCase(), headers: call.headers, body: hasBody ? call.body : undefined });
          const status = String(res.status);
          seen.add(res.status);
          const what = `${method.toUpperCase()} ${path} (${call.why}) → ${status}`;
          if (!op.responses[status]) undeclared.push(`${what} ${res.text.slice(0, 120)}`);
          else if (res.status >= 400) {
            const code = res.json?.error as keyof typeof ERROR_STATUS;
            if (ERROR_STATUS[code] !== res.status) undeclared.push(`${what}: code ${code} is not one of that status`);
            if (!op.responses[status].description.includes(code)) undeclared.push(`${what}: the answer's description does not name ${code}`);
          }
        }
      }
    }
    expect(undeclared).toEqual([]);
    // The wrong requests did reach the checks they aim at.
    expect([...seen].sort()).toEqual(expect.arrayContaining([200, 201, 400, 401, 403, 404, 413]));
  }, 120_000);
});
