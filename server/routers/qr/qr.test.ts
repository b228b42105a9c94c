import QRCode from "qrcode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueToken } from "../../lib/users";
import { createTestServer, http, type TestServer, type TestUser } from "../../test/harness";
import { contrastRatio } from "../../domain/contrast";

let t: TestServer;
let alice: TestUser;
let bob: TestUser;
beforeAll(async () => {
  t = await createTestServer();
  alice = await t.user({ plan: "pro" });
  bob = await t.user({ plan: "pro" });
});
afterAll(() => t?.close());

const newLink = (u: TestUser = alice) => t.caller(u.auth).link.create({ url: "https://dest.example/" });
const bytes = async (path: string, headers: Record<string, string> = alice.auth) => {
  const res = await fetch(`${t.api}${path}`, { headers });
  return { status: res.status, type: res.headers.get("content-type"), body: Buffer.from(await res.arrayBuffer()) };
};

describe("GET /links/{id}/qr", () => {
  it("answers an SVG by default that encodes the short URL with ?qr=1, black on white, margin 2, level M", async () => {
    const l = await newLink();
    const r = await bytes(`/links/${l.id}/qr`);
    expect(r.status).toBe(200);
    expect(r.type).toBe("image/svg+xml");
    const expected = await QRCode.toString(`${l.short_url}?qr=1`, {
      type: "svg",
      margin: 2,
      errorCorrectionLevel: "M",
      color: { dark: "#000000ff", light: "#ffffffff" },
    });
    expect(r.body.toString("utf8")).toBe(expected);
  });

  it("answers a PNG of the asked size (default 512) with the asked colours, margin and level", async () => {
    const l = await newLink();
    const png = await bytes(`/links/${l.id}/qr?format=png`);
    expect(png.type).toBe("image/png");
    expect(png.body.subarray(1, 4).toString("latin1")).toBe("PNG");
    expect([png.body.readUInt32BE(16), png.body.readUInt32BE(20)]).toEqual([512, 512]);
    const custom = await bytes(`/links/${l.id}/qr?format=png&size=300&fg=%23112233&bg=%23FFEEDD&margin=0&ecl=H`);
    expect([custom.body.readUInt32BE(16), custom.body.readUInt32BE(20)]).toEqual([300, 300]);
    const expected = await QRCode.toBuffer(`${l.short_url}?qr=1`, {
      type: "png",
      width: 300,
      margin: 0,
      errorCorrectionLevel: "H",
      color: { dark: "#112233ff", light: "#ffeeddff" },
    });
    expect(custom.body.equals(expected)).toBe(true);
  });

  it("a foreground and background with a contrast ratio under 3 answer 400 naming fg", async () => {
    const l = await newLink();
    expect(contrastRatio("#777777", "#ffffff")).toBeLessThan(5);
    const r = await http(`${t.api}/links/${l.id}/qr?fg=%23aaaaaa&bg=%23ffffff`, { headers: alice.auth });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("VALIDATION_FAILED");
    expect(Object.keys(r.json.fields)).toEqual(["fg"]);
    // White on black is as readable as black on white.
    expect((await bytes(`/links/${l.id}/qr?fg=%23ffffff&bg=%23000000`)).status).toBe(200);
  });

  it.each([
    ["format", "format=gif"],
    ["size", "size=63"],
    ["size", "size=2049"],
    ["fg", "fg=red"],
    ["bg", "bg=%23fff"],
    ["margin", "margin=17"],
    ["ecl", "ecl=X"],
    ["colour", "colour=%23000000"],
  ])("a bad or unknown parameter answers 400 VALIDATION_FAILED naming %s (%s)", async (name, query) => {
    const l = await newLink();
    const r = await http(`${t.api}/links/${l.id}/qr?${query}`, { headers: alice.auth });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("VALIDATION_FAILED");
    expect(Object.keys(r.json.fields)).toContain(name);
  });

  it("another workspace's link, and a deleted link, answer 404", async () => {
    const theirs = await newLink(bob);
    const r = await http(`${t.api}/links/${theirs.id}/qr`, { headers: alice.auth });
    expect([r.status, r.json]).toEqual([404, { error: "NOT_FOUND" }]);
    const gone = await newLink();
    await t.caller(alice.auth).link.delete({ id: gone.id });
    expect((await bytes(`/links/${gone.id}/qr`)).status).toBe(404);
  });

  it("a token needs links:read (403 INSUFFICIENT_SCOPE without it); none at all is 401", async () => {
    const l = await newLink();
    const { token: analyticsOnly } = await issueToken(t.app.db, alice.id, "analytics", undefined, ["analytics:read"]);
    const denied = await http(`${t.api}/links/${l.id}/qr`, { headers: { authorization: `Bearer ${analyticsOnly}` } });
    expect([denied.status, denied.json]).toEqual([403, { error: "INSUFFICIENT_SCOPE" }]);
    const { token: reader } = await issueToken(t.app.db, alice.id, "reader", undefined, ["links:read"]);
    expect((await bytes(`/links/${l.id}/qr`, { authorization: `Bearer ${reader}` })).status).toBe(200);
    expect((await bytes(`/links/${l.id}/qr`, {})).status).toBe(401);
  });

  it("/openapi.json documents the path with its image content types and scope", async () => {
    const doc = (await http(`${t.api}/openapi.json`)).json;
    const op = doc.paths["/links/{id}/qr"].get;
    expect(Object.keys(op.responses["200"].content).sort()).toEqual(["image/png", "image/svg+xml"]);
    expect(op["x-scopes"]).toEqual(["links:read"]);
    expect(op.parameters.map((p: { name: string }) => p.name).sort()).toEqual(["bg", "ecl", "fg", "format", "id", "margin", "size"]);
  });
});
