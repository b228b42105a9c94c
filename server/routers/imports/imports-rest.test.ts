import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiTokens, webhookDeliveries } from "../../../db/schema";
import { createTestServer, http, pollUntil, type TestServer, type TestUser } from "../../test/harness";
import { Examples, type Schema } from "../../http/openapi-examples";
import { startImportRunner, type ImportRunner } from "./runner";

// An import is a REST path too: a script sends a CSV file's text and follows the job it answers.
let t: TestServer;
let u: TestUser;
let runner: ImportRunner;
beforeAll(async () => {
  t = await createTestServer({ WEBHOOK_ALLOW_PRIVATE: "true" }); // a webhook endpoint on loopback
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
    // The answer fits its schema in /openapi.json: a rejected row's url is the file's text, no URI.
    const doc = (await http(`${t.api}/openapi.json`)).json;
    const examples = new Examples(doc.components.schemas as Record<string, Schema>);
    expect(examples.fits(doc.paths["/imports/{id}"].get.responses["200"].content["application/json"].schema, done)).toBe(true);
    // A mapping names the file's columns: `{"url": "Long URL"}` is a valid request.
    const mapping = doc.paths["/imports"].post.requestBody.content["application/json"].schema.properties.mapping;
    expect(examples.fits(mapping, { url: "Long URL", og_image: "Image" })).toBe(true);
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

  it("each link an import makes is a link.created event for the workspace's webhooks", async () => {
    const owner = await t.user({ plan: "pro" });
    const as = (method: string, path: string, json?: unknown) => http(`${t.api}${path}`, { method, json, headers: owner.auth });
    const hook = await as("POST", "/webhooks", { url: "http://127.0.0.1:9/hook", events: ["link.created"] });
    expect(hook.status, hook.text).toBe(201);
    const slug = `hook-imp-${Date.now().toString(36)}`;
    const r = await as("POST", "/imports", { csv: `url,slug\nhttps://example.com/h1,${slug}\nhttps://example.com/h2,\nbad url,\n` });
    await pollUntil(
      () => as("GET", `/imports/${r.json.id}`).then((x) => x.json),
      (j) => j.status === "done",
      30_000,
    );
    const sent = await t.app.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, hook.json.id));
    const made = (sent.map((d) => d.payload) as { type: string; data: { url: string; slug: string } }[]).sort((a, b) => a.data.url.localeCompare(b.data.url));
    expect(made.map((p) => [p.type, p.data.url])).toEqual([
      ["link.created", "https://example.com/h1"],
      ["link.created", "https://example.com/h2"],
    ]);
    expect(made[0].data.slug).toBe(slug);
  });

  it("the import's audit event names the token that started it", async () => {
    const r = await api("POST", "/imports", { csv: "url\nhttps://example.com/audited\n" });
    await pollUntil(
      () => job(r.json.id),
      (j) => j.status === "done",
      30_000,
    );
    const events = (await api("GET", "/audit?action=link.imported")).json.events as { target: { id: string }; actor: { token_id: string | null } }[];
    const mine = events.find((e) => e.target.id === r.json.id);
    const [token] = await t.app.db.select({ id: apiTokens.id }).from(apiTokens).where(eq(apiTokens.userId, u.id));
    expect(mine?.actor.token_id).toBe(token.id);
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
