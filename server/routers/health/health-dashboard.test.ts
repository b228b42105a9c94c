import { existsSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { linkHealth } from "../../../db/schema";
import { createProber } from "../../core/health-probe";
import { createTestServer, http as call, type TestServer, type TestUser } from "../../test/harness";
import { insertLink } from "../links/links.service";
import { checkLink } from "./health.service";

/** The dashboard's side of destination health, as a browser without JavaScript sees it. */
describe.skipIf(!existsSync("build/index.js"))("destination health in the dashboard", () => {
  let dest: http.Server;
  let base = "";
  let t: TestServer;
  let u: TestUser;
  let cookie: string;
  const fast = createProber({ hostIntervalMs: 0, timeoutMs: 2000 });

  beforeAll(async () => {
    dest = http.createServer((req, res) => res.writeHead(req.url?.startsWith("/gone") ? 410 : 200).end());
    await new Promise<void>((r) => dest.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(dest.address() as AddressInfo).port}`;
    t = await createTestServer({ WEBHOOK_ALLOW_PRIVATE: "true" }, { remix: true });
    u = await t.user();
    const session = await t.app.lucia.createSession(u.id, { createdAt: Date.now() });
    cookie = `app_session=${session.id}`;
  });
  afterAll(async () => {
    await t?.close();
    dest.closeAllConnections();
    await new Promise<void>((r) => dest.close(() => r()));
  });

  /** The HTML of one link's row in the list (cards, or the compact table). */
  const rowOf = (html: string, id: string) => {
    const start = html.indexOf(`data-id="${id}"`);
    expect(start, `row of ${id}`).toBeGreaterThan(-1);
    const next = html.indexOf('data-testid="link-row"', start);
    return html.slice(start, next === -1 ? undefined : next);
  };

  it("a broken link carries a Broken badge in the list, in both views; a working one does not", async () => {
    const broken = await insertLink(t.app.db, { workspaceId: u.workspaceId, url: `${base}/gone` });
    const fine = await insertLink(t.app.db, { workspaceId: u.workspaceId, url: `${base}/ok` });
    await checkLink(t.app, broken, fast);
    await checkLink(t.app, broken, fast);
    await checkLink(t.app, fine, fast);
    for (const view of ["cards", "table"]) {
      const page = await call(`${t.appUrl}/links`, { headers: { cookie: `${cookie}; links_view=${view}` } });
      expect(page.status).toBe(200);
      expect(rowOf(page.text, broken.id)).toContain(">Broken</span>");
      expect(rowOf(page.text, fine.id)).not.toContain(">Broken</span>");
    }
  });

  it("the link page shows the destinations' health, and Check now checks them and shows the result", async () => {
    const link = await insertLink(t.app.db, { workspaceId: u.workspaceId, url: `${base}/ok?page` });
    const before = await call(`${t.appUrl}/links/${link.id}`, { headers: { cookie } });
    expect(before.status).toBe(200);
    expect(before.text).toContain("Destination health");
    expect(before.text).toContain("Not known yet");
    const after = await call(`${t.appUrl}/links/${link.id}`, {
      method: "POST",
      headers: { cookie, origin: t.appUrl, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ intent: "check-health" }).toString(),
    });
    expect(after.status).toBe(200);
    expect(after.text).toContain("Every destination answered.");
    const [row] = await t.app.db.select().from(linkHealth).where(eq(linkHealth.linkId, link.id));
    expect(row).toMatchObject({ status: "ok", httpStatus: 200 });
  });
});
