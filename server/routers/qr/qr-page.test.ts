import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signedInDashboard } from "../../test/dashboard-session";
import { http, type TestServer, type TestUser } from "../../test/harness";

describe.skipIf(!existsSync("build/index.js"))("the dashboard's QR code (Remix)", () => {
  let t: TestServer;
  let u: TestUser;
  let cookie: string;
  beforeAll(async () => void ({ t, u, cookie } = await signedInDashboard({ plan: "pro" })));
  afterAll(() => t?.close());

  it("the QR route answers the same image as GET /links/{id}/qr for the same options, as a download when asked", async () => {
    const link = await t.caller(u.auth).link.create({ url: "https://dest.example/" });
    const query = "format=png&size=128&fg=%23003366&bg=%23ffffff&margin=1&ecl=Q";
    const page = await fetch(`${t.appUrl}/links/${link.id}/qr?${query}&download=1`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("image/png");
    expect(page.headers.get("content-disposition")).toBe(`attachment; filename="qr-${link.slug}.png"`);
    const api = await fetch(`${t.api}/links/${link.id}/qr?${query}`, { headers: u.auth });
    expect(Buffer.from(await page.arrayBuffer()).equals(Buffer.from(await api.arrayBuffer()))).toBe(true);
  });

  it("the link page offers the QR code with colour, size, margin and error correction, and a download", async () => {
    const link = await t.caller(u.auth).link.create({ url: "https://dest.example/" });
    const html = (await http(`${t.appUrl}/links/${link.id}`, { headers: { cookie } })).text;
    expect(html).toContain('data-testid="qr-dialog"');
    for (const name of ["fg", "bg", "format", "size", "margin", "ecl"]) expect(html).toContain(`name="${name}"`);
    expect(html).toContain(`action="/links/${link.id}/qr"`);
    expect(html).toContain('data-testid="qr-download"');
  });
});
