import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp, type TestUser } from "../../test/harness";
import { toPublicError } from "../../domain/errors";

let t: TestApp;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  alice = await t.user();
  bob = await t.user();
});
afterAll(() => t?.close());

const as = (u: TestUser) => t.caller(u.auth);
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (e) => toPublicError(e).body.error,
  );
const uniq = () => Math.random().toString(36).slice(2, 8);

describe("link.slugAvailable (dashboard)", () => {
  it("says whether a slug is free in the shared namespace", async () => {
    const s = `slug-${uniq()}`;
    expect(await as(alice).link.slugAvailable({ slug: s })).toEqual({ slug: s, available: true });
    await as(bob).link.create({ url: "https://example.com/", slug: s });
    expect(await as(alice).link.slugAvailable({ slug: s })).toEqual({ slug: s, available: false });
  });

  it("rejects an invalid slug with INVALID_LINK_ID", async () => {
    expect(await codeOf(as(alice).link.slugAvailable({ slug: "Bad Slug" }))).toBe("INVALID_LINK_ID");
  });

  it("needs authentication", async () => {
    expect(await codeOf(t.caller({}).link.slugAvailable({ slug: "abc" }))).toBe("UNAUTHORIZED");
  });
});

describe("link.suggest (the analytics page's link picker)", () => {
  it("the picker asks the server: a few matching links of the caller's workspace, an exact slug first", async () => {
    const u = await t.user();
    const s = `pick-${uniq()}`;
    const exact = await as(u).link.create({ url: "https://example.com/x", slug: s });
    const longer = await as(u).link.create({ url: "https://example.com/y", slug: `${s}-more` });
    const byUrl = await as(u).link.create({ url: `https://example.com/${s}` });
    await as(bob).link.create({ url: `https://example.com/${s}-bob` });
    const r = await as(u).link.suggest({ q: s.toUpperCase() });
    expect(r.links[0]).toEqual({ id: exact.id, slug: s, short_url: exact.short_url, url: exact.url });
    expect(r.links.map((l) => l.id).sort()).toEqual([exact.id, longer.id, byUrl.id].sort());
  });

  it("the picker answers at most `limit` links, newest first, without a query too", async () => {
    const u = await t.user();
    const made = [];
    for (let i = 0; i < 4; i++) made.push((await as(u).link.create({ url: `https://example.com/s${i}` })).id);
    expect((await as(u).link.suggest({ limit: 3 })).links.map((l) => l.id)).toEqual(made.reverse().slice(0, 3));
  });

  it("the picker treats % and _ as literal characters and leaves deleted links out", async () => {
    const u = await t.user();
    const gone = await as(u).link.create({ url: "https://example.com/gone", slug: `gone-${uniq()}` });
    await as(u).link.delete({ id: gone.id });
    expect((await as(u).link.suggest({ q: gone.slug })).links).toEqual([]);
    expect((await as(u).link.suggest({ q: "%" })).links).toEqual([]);
  });

  it("the picker refuses a limit over 20 with VALIDATION_FAILED", async () => {
    expect(await codeOf(as(alice).link.suggest({ limit: 21 }))).toBe("VALIDATION_FAILED");
  });
});
