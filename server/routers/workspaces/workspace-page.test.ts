import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signedInDashboard } from "../../test/dashboard-session";
import { http, type TestServer } from "../../test/harness";

// Needs the Remix build (`npm run build`): the page is a Remix route.
describe.skipIf(!existsSync("build/index.js"))("a team's page (Remix, no JavaScript)", () => {
  let t: TestServer;
  let form: Record<string, string>;
  beforeAll(async () => void ({ t, formHeaders: form } = await signedInDashboard({ plan: "pro" })));
  afterAll(() => t?.close());

  const submit = (id: string, fields: [string, string][]) =>
    http(`${t.appUrl}/workspaces/${id}`, {
      method: "POST",
      headers: { ...form, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    });
  const teams = async () => (await http(`${t.api}/workspaces`, { headers: { cookie: form.cookie } })).json.workspaces as { id: string }[];

  it("deleting the workspace without the box ticked is refused on the page and deletes nothing; ticked, it goes", async () => {
    const made = await http(`${t.api}/workspaces`, { method: "POST", headers: { cookie: form.cookie }, json: { name: "Doomed team" } });
    expect(made.status).toBe(201);
    const id: string = made.json.id;
    const refused = await submit(id, [["intent", "delete"]]);
    expect(refused.status).toBe(200);
    expect(refused.text).toContain("tick the box to confirm");
    expect((await teams()).some((w) => w.id === id)).toBe(true);
    const done = await submit(id, [
      ["intent", "delete"],
      ["confirm", "yes"],
    ]);
    expect(done.status).toBe(302);
    expect((await teams()).some((w) => w.id === id)).toBe(false);
  });
});
