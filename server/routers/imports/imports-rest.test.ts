import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, pollUntil, type TestServer, type TestUser } from "../../test/harness";
import { startImportRunner, type ImportRunner } from "./runner";

// An import is a REST path too: a script sends a CSV file's text and follows the job it answers.
let t: TestServer;
let u: TestUser;
let runner: ImportRunner;
beforeAll(async () => {
  t = await createTestServer();
  u = await t.user({ plan: "pro" });
  runner = startImportRunner(t.app, { pollMs: 50 }); // the server process's runner, as main.ts starts it
});
afterAll(async () => {
  await runner?.stop();
  await t?.close();
});

const api = (method: string, path: string, json?: unknown) => http(`${t.api}${path}`, { method, json, headers: u.auth });
const job = (id: string) => api("GET", `/imports/${id}`).then((r) => r.json);

describe("POST /imports", () => {
  it("queues the file's rows as a job (201); GET /imports/{id} follows it to done, with each row created, skipped or rejected", async () => {
    const slug = `rest-imp-${Date.now().toString(36)}`;
    const csv = `url,slug,tags\nhttps://example.com/one,${slug},"a|b"\nnot a url,${slug}-x,\nhttps://example.com/two,,\n`;
    const r = await api("POST", "/imports", { csv });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({ id: expect.stringMatching(/^[0-9a-z]{8}$/), status: expect.stringMatching(/^(queued|running)$/), format: "generic" });
    const done = await pollUntil(
      () => job(r.json.id),
      (j) => j.status === "done",
      30_000,
    );
    expect(done).toMatchObject({ status: "done", rows: 3, created: 2, skipped: 0, rejected: 1 });
    expect(done.rejects).toEqual([expect.objectContaining({ row: 2, error: "VALIDATION_FAILED", fields: { url: expect.any(Array) } })]);
    const made = (await api("GET", `/links?slug=${slug}`)).json.links;
    expect(made).toEqual([expect.objectContaining({ url: "https://example.com/one", tags: ["a", "b"] })]);
    // The same file again creates nothing: its rows' slugs already point at their URLs.
    const again = await api("POST", "/imports", { csv: `url,slug\nhttps://example.com/one,${slug}\n` });
    expect(
      (
        await pollUntil(
          () => job(again.json.id),
          (j) => j.status === "done",
          30_000,
        )
      ).skipped,
    ).toBe(1);
    expect((await api("GET", "/imports")).json.imports.map((j: { id: string }) => j.id)).toEqual(expect.arrayContaining([r.json.id, again.json.id]));
  });

  it("a file that is no CSV of links answers 400 naming csv, and queues nothing", async () => {
    const before = (await api("GET", "/imports")).json.imports.length;
    for (const csv of ["url,slug\n", "", "\u0000"]) {
      const r = await api("POST", "/imports", { csv });
      expect(r.status, csv).toBe(400);
      expect(Object.keys(r.json.fields), csv).toEqual(["csv"]);
    }
    expect((await api("GET", "/imports")).json.imports.length).toBe(before);
  });

  it("another workspace's import is 404, and the paths are in /openapi.json", async () => {
    const r = await api("POST", "/imports", { csv: "url\nhttps://example.com/mine\n" });
    const other = await t.user();
    expect((await http(`${t.api}/imports/${r.json.id}`, { headers: other.auth })).status).toBe(404);
    const doc = (await http(`${t.api}/openapi.json`)).json;
    expect(doc.paths["/imports"].post).toBeDefined();
    expect(doc.paths["/imports"].get).toBeDefined();
    expect(doc.paths["/imports/{id}"].get).toBeDefined();
  });
});
