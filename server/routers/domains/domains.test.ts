import { randomBytes } from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditEvents, domains, links, slugBlocks } from "../../../db/schema";
import { pickFreeDomainSlug } from "../../lib/slugs";
import { createTestApp, createTestServer, http, type TestServer, type TestUser } from "../../test/harness";
import { signIn, uniqueEmail } from "../auth/sign-in.test-helper";
import { startDnsServer, type TestDnsServer } from "./dns-server.test-helper";

// Branded domains (docs/teams-and-domains.md): the API, verification against a real local DNS server, and
// links on them. What the redirect host does with them: server/redirect/branded.test.ts.
let t: TestServer;
let dns: TestDnsServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  dns = await startDnsServer();
  t = await createTestServer({ DNS_SERVERS: dns.address });
  alice = await t.user({ plan: "pro" });
  bob = await t.user({ plan: "pro" });
});
// Each group of rules gets its own Alice: a workspace holds at most 20 unverified domains, and the
// groups together add more than that.
const freshAlice = () =>
  beforeAll(async () => {
    alice = await t.user({ plan: "pro" });
  });
afterAll(async () => {
  await t?.close();
  await dns?.close();
});

type Domain = {
  id: string;
  name: string;
  verified: boolean;
  verified_at: number | null;
  verification: { type: string; name: string; value: string };
  not_found_url: string | null;
  created_at: number;
};
const req = (method: string, path: string, json?: unknown, auth: Record<string, string> = alice.auth) =>
  http(`${t.api}${path}`, { method, json, headers: auth });
const uniqueName = (p = "go") => `${p}-${randomBytes(4).toString("hex")}.acme.example`;
const addDomain = async (name = uniqueName(), auth = alice.auth): Promise<Domain> => {
  const r = await req("POST", "/domains", { name }, auth);
  expect(r.status, r.text).toBe(201);
  return r.json;
};
/** Publishes the record in the test DNS server and verifies. */
const verifiedDomain = async (name = uniqueName(), auth = alice.auth): Promise<Domain> => {
  const d = await addDomain(name, auth);
  dns.txt.set(d.verification.name, [d.verification.value]);
  const r = await req("POST", `/domains/${d.id}/verify`, undefined, auth);
  expect(r.json.verified).toBe(true);
  return r.json;
};
const storedNames = async () => (await t.app.db.select({ name: domains.name }).from(domains)).map((r) => r.name);
const newLink = async (json: Record<string, unknown>, auth = alice.auth) => {
  const r = await req("POST", "/links", { url: "https://dest.example/x", ...json }, auth);
  expect(r.status, r.text).toBe(201);
  return r.json as { id: string; slug: string; short_url: string; redirect_domain: string };
};

describe("POST /domains", () => {
  freshAlice();
  it("adds an unverified domain: 201 Domain with a TXT record _links-verify.<name> = links-verify=<24 base62>", async () => {
    const name = uniqueName();
    const before = Date.now();
    const r = await req("POST", "/domains", { name });
    expect(r.status).toBe(201);
    expect(r.json).toEqual({
      id: expect.stringMatching(/^[0-9a-z]{8}$/),
      name,
      verified: false,
      verified_at: null,
      verification: { type: "TXT", name: `_links-verify.${name}`, value: expect.stringMatching(/^links-verify=[0-9A-Za-z]{24}$/) },
      not_found_url: null,
      created_at: expect.any(Number),
    });
    expect(r.json.created_at).toBeGreaterThanOrEqual(before);
    // A new value for every domain.
    expect((await addDomain()).verification.value).not.toBe(r.json.verification.value);
  });

  it("accepts an internationalised name as punycode, and a long but valid name", async () => {
    const puny = `xn--bcher-kva.${uniqueName()}`;
    expect((await addDomain(puny)).name).toBe(puny);
    const label = "a".repeat(63);
    const long = `${label}.${label}.${label}.${randomBytes(4).toString("hex")}.example`; // 3×64 + 17 = 209
    expect((await addDomain(long)).name).toBe(long);
  });

  it("409 DOMAIN_TAKEN when the workspace has the name already, and nothing is stored", async () => {
    const name = uniqueName();
    await addDomain(name);
    const same = await req("POST", "/domains", { name });
    expect(same.status).toBe(409);
    expect(same.json).toEqual({ error: "DOMAIN_TAKEN" });
    expect((await storedNames()).filter((n) => n === name)).toHaveLength(1);
  });

  it("a name used by any workspace answers 409 DOMAIN_TAKEN and stores nothing, verified or not; a claim that lapsed frees it", async () => {
    const name = uniqueName("used");
    const bobs = await addDomain(name, bob.auth);
    const other = await req("POST", "/domains", { name });
    expect(other.status).toBe(409);
    expect(other.json).toEqual({ error: "DOMAIN_TAKEN" });
    expect((await storedNames()).filter((n) => n === name)).toHaveLength(1);
    // Unverified claims lapse after 7 days: then the name is free again.
    await t.app.db
      .update(domains)
      .set({ createdAt: Date.now() - 8 * 24 * 3600 * 1000 })
      .where(eq(domains.id, bobs.id));
    const owner = await verifiedDomain(name);
    expect(owner.name).toBe(name);
    // And once verified, taken for everyone else.
    const carol = await t.user();
    expect((await req("POST", "/domains", { name }, carol.auth)).json).toEqual({ error: "DOMAIN_TAKEN" });
  });

  it("only the verification that verifies is an audit event: a miss, and a domain verified before, log nothing", async () => {
    const d = await addDomain(uniqueName("audited"));
    const verifiedEvents = async () =>
      (
        await t.app.db
          .select()
          .from(auditEvents)
          .where(and(eq(auditEvents.targetId, d.id), eq(auditEvents.action, "domain.verified")))
      ).length;
    expect((await req("POST", `/domains/${d.id}/verify`)).json.verified).toBe(false);
    expect(await verifiedEvents()).toBe(0);
    dns.txt.set(d.verification.name, [d.verification.value]);
    expect((await req("POST", `/domains/${d.id}/verify`)).json.verified).toBe(true);
    expect(await verifiedEvents()).toBe(1);
    expect((await req("POST", `/domains/${d.id}/verify`)).json.verified).toBe(true);
    expect(await verifiedEvents()).toBe(1);
  });

  it("two workspaces verifying the same name at once (two claims that raced in): one owner, the other 409 DOMAIN_TAKEN", async () => {
    const name = uniqueName("race");
    const a = await addDomain(name);
    // A second claim as a concurrent POST could leave it (the check and the insert are not one statement).
    const [b] = await t.app.db
      .insert(domains)
      .values({ id: randomBytes(4).toString("hex"), workspaceId: bob.workspaceId, name, verificationValue: a.verification.value, createdAt: Date.now() })
      .returning();
    dns.txt.set(a.verification.name, [a.verification.value]);
    const answers = await Promise.all([req("POST", `/domains/${a.id}/verify`), req("POST", `/domains/${b.id}/verify`, undefined, bob.auth)]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(answers.find((r) => r.status === 200)!.json.verified).toBe(true);
    const verified = await t.app.db.select().from(domains).where(eq(domains.name, name));
    expect(verified.filter((d) => d.verified)).toHaveLength(1);
  });

  it("unverified claims expire 7 days after they were added: gone from the list, 404 by id (verify too), the name free to claim again", async () => {
    const carol = await t.user();
    const name = uniqueName("old");
    const d = await addDomain(name, carol.auth);
    const kept = await addDomain(uniqueName("new"), carol.auth);
    const eightDaysAgo = Date.now() - 8 * 24 * 3600 * 1000;
    await t.app.db.update(domains).set({ createdAt: eightDaysAgo }).where(eq(domains.id, d.id));
    expect((await req("GET", "/domains", undefined, carol.auth)).json.domains.map((x: Domain) => x.id)).toEqual([kept.id]);
    dns.txt.set(d.verification.name, [d.verification.value]);
    const verify = await req("POST", `/domains/${d.id}/verify`, undefined, carol.auth);
    expect(verify.status).toBe(404);
    expect(verify.json).toEqual({ error: "NOT_FOUND" });
    expect((await req("PATCH", `/domains/${d.id}`, { not_found_url: null }, carol.auth)).status).toBe(404);
    expect((await req("DELETE", `/domains/${d.id}`, undefined, carol.auth)).status).toBe(404);
    // Not usable for links either.
    const link = await req("POST", "/links", { url: "https://dest.example/x", domain: name }, carol.auth);
    expect(link.status).toBe(400);
    expect(link.json.fields.domain.join(" ")).toMatch(/not a domain of this workspace/);
    // The same workspace may claim it again: a new claim with a new record value.
    const again = await addDomain(name, carol.auth);
    expect(again.id).not.toBe(d.id);
    expect(again.verification.value).not.toBe(d.verification.value);
    expect((await t.app.db.select().from(domains).where(eq(domains.id, d.id))).length).toBe(0);
    // A verified domain never expires.
    const v = await verifiedDomain(uniqueName("kept"), carol.auth);
    await t.app.db.update(domains).set({ createdAt: eightDaysAgo }).where(eq(domains.id, v.id));
    expect((await req("GET", "/domains", undefined, carol.auth)).json.domains.map((x: Domain) => x.id)).toContain(v.id);
  });

  it("a link on a domain not usable yet is refused in plain words, without API paths", async () => {
    const d = await addDomain();
    for (const domain of [d.name, uniqueName("none")]) {
      const link = await req("POST", "/links", { url: "https://dest.example/x", domain });
      expect(link.status).toBe(400);
      const words = link.json.fields.domain.join(" ");
      expect(words).toMatch(/Domains page/);
      expect(words).not.toMatch(/POST|\/domains|\{id\}/);
    }
  });

  it("at most 20 unverified domains per workspace: the 21st answers 409 DOMAIN_LIMIT and is not stored; verified and expired ones do not count", async () => {
    const dave = await t.user({ plan: "pro" });
    const first = [];
    for (let i = 0; i < 20; i++) first.push(await addDomain(uniqueName(`lim${i}`), dave.auth));
    const name = uniqueName("over");
    const over = await req("POST", "/domains", { name }, dave.auth);
    expect(over.status).toBe(409);
    expect(over.json).toEqual({ error: "DOMAIN_LIMIT" });
    expect(await storedNames()).not.toContain(name);
    // Verifying one frees its slot...
    dns.txt.set(first[0].verification.name, [first[0].verification.value]);
    expect((await req("POST", `/domains/${first[0].id}/verify`, undefined, dave.auth)).json.verified).toBe(true);
    await addDomain(uniqueName("v"), dave.auth);
    expect((await req("POST", "/domains", { name: uniqueName("full") }, dave.auth)).json).toEqual({ error: "DOMAIN_LIMIT" });
    // ...and so does one that expired.
    await t.app.db
      .update(domains)
      .set({ createdAt: Date.now() - 8 * 24 * 3600 * 1000 })
      .where(eq(domains.id, first[1].id));
    await addDomain(uniqueName("e"), dave.auth);
    // Another workspace has its own 20.
    await addDomain(uniqueName("other"), bob.auth);
  });

  const bad: [string, unknown, RegExp][] = [
    ["a scheme", "https://go.acme.example", /scheme/],
    ["a path", "go.acme.example/launch", /path/],
    ["a port", "go.acme.example:8080", /port/],
    ["an IPv4 address", "203.0.113.9", /IP address/],
    ["an IPv6 address", "2001:db8::1", /IP address/],
    ["a bracketed IPv6 address", "[2001:db8::1]", /IP address/],
    ["upper case", "Go.Acme.example", /lower case/],
    ["an unconverted internationalised name", "bücher.example", /punycode/],
    ["invalid punycode", "xn--zz-.acme.example", /label|punycode/],
    ["over 253 characters", `${"abcdefgh.".repeat(28)}example`, /253/],
    ["a label over 63 characters", `${"a".repeat(64)}.example`, /63/],
    ["one label", "localhost", /two labels/],
    ["an empty label", "go..acme.example", /empty label/],
    ["a trailing dot", "go.acme.example.", /dot/],
    ["a label starting with a hyphen", "-go.acme.example", /hyphen/],
    ["an underscore", "go_links.acme.example", /letters/],
    ["a space", "go acme.example", /space/],
    ["an all-digit top-level label", "go.acme.123", /IP address/],
    ["empty", "", /empty/],
    ["not a string", 42, /string/],
  ];
  it.each(bad)("400 VALIDATION_FAILED naming `name` for %s, nothing stored", async (_what, name, message) => {
    const before = await storedNames();
    const r = await req("POST", "/domains", { name });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("VALIDATION_FAILED");
    expect(Object.keys(r.json.fields)).toEqual(["name"]);
    expect(r.json.fields.name.join(" ")).toMatch(message);
    expect(await storedNames()).toEqual(before);
  });

  it("400 for the hosts of REDIRECT_URL, APP_URL and API_URL", async () => {
    const s = await createTestApp({ APP_URL: "http://dash.acme.example:4000", API_URL: "https://api.acme.example", REDIRECT_URL: "http://s.acme.example" });
    try {
      const u = await s.user();
      for (const name of ["dash.acme.example", "api.acme.example", "s.acme.example"]) {
        const r = await s
          .caller(u.auth)
          .domain.create({ name })
          .catch((e) => e.cause ?? e);
        expect(r.publicCode, name).toBe("VALIDATION_FAILED");
        expect(r.fields.name.join(" ")).toMatch(/own host/);
      }
      expect((await s.caller(u.auth).domain.list({})).domains).toEqual([]);
      // Needs the configuration, yet listed with the schema's failures: `fields` lists every failing field.
      const both = await s
        .caller(u.auth)
        .domain.create({ name: "s.acme.example", bogus: 1 } as never)
        .catch((e) => e.cause ?? e);
      expect(Object.keys(both.fields).sort()).toEqual(["bogus", "name"]);
    } finally {
      await s.close();
    }
  });

  it("400 for unknown members and a missing name", async () => {
    const r = await req("POST", "/domains", { name: uniqueName(), verified: true });
    expect(r.status).toBe(400);
    expect(r.json.fields).toHaveProperty("verified");
    const missing = await req("POST", "/domains", {});
    expect(missing.status).toBe(400);
    expect(missing.json.fields).toHaveProperty("name");
  });

  it("needs a token or a session: 401 without one", async () => {
    expect((await http(`${t.api}/domains`, { method: "POST", json: { name: uniqueName() } })).status).toBe(401);
    expect((await http(`${t.api}/domains`)).status).toBe(401);
    const session = await signIn(t, uniqueEmail("dom"));
    const r = await http(`${t.api}/domains`, { method: "POST", json: { name: uniqueName() }, headers: session.headers });
    expect(r.status).toBe(201);
  });
});

describe("GET /domains", () => {
  freshAlice();
  it("lists the workspace's domains by name, no other workspace's", async () => {
    const carol = await t.user();
    const names = [uniqueName("m"), uniqueName("b"), uniqueName("x")];
    for (const n of names) await addDomain(n, carol.auth);
    await addDomain(uniqueName("a"), bob.auth);
    const r = await req("GET", "/domains", undefined, carol.auth);
    expect(r.status).toBe(200);
    expect(r.json.domains.map((d: Domain) => d.name)).toEqual([...names].sort());
  });
});

describe("POST /domains/{id}/verify", () => {
  freshAlice();
  it("verifies when a TXT record at verification.name equals verification.value", async () => {
    const d = await addDomain();
    dns.txt.set(d.verification.name, ["v=spf1 -all", d.verification.value]);
    const before = Date.now();
    const r = await req("POST", `/domains/${d.id}/verify`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ ...d, verified: true, verified_at: expect.any(Number) });
    expect(r.json.verified_at).toBeGreaterThanOrEqual(before);
    expect(dns.asked).toContain(`TXT ${d.verification.name}`);
  });

  it("stays unverified (200) when there is no record", async () => {
    const d = await addDomain();
    const r = await req("POST", `/domains/${d.id}/verify`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual(d);
  });

  it("stays unverified when the record has a wrong value, or the value of another domain", async () => {
    const d = await addDomain();
    const other = await addDomain();
    dns.txt.set(d.verification.name, ["links-verify=wrongwrongwrongwrongwron", other.verification.value, `${d.verification.value}x`]);
    const r = await req("POST", `/domains/${d.id}/verify`);
    expect(r.json.verified).toBe(false);
  });

  it("stays unverified, within the timeout, when the DNS server does not answer", async () => {
    const silent = await startDnsServer({ silent: true });
    const s = await createTestApp({ DNS_SERVERS: silent.address });
    try {
      const u = await s.user();
      const d = await s.caller(u.auth).domain.create({ name: uniqueName() });
      const started = Date.now();
      const r = await s.caller(u.auth).domain.verify({ id: d.id });
      expect(r.verified).toBe(false);
      expect(Date.now() - started).toBeLessThan(6_000);
      expect(silent.asked.length).toBeGreaterThan(0);
    } finally {
      await s.close();
      await silent.close();
    }
  });

  it("once verified stays verified: the record may go, no look-up is made again", async () => {
    const d = await verifiedDomain();
    dns.txt.delete(d.verification.name);
    const asked = dns.asked.length;
    const r = await req("POST", `/domains/${d.id}/verify`);
    expect(r.json).toEqual(d);
    expect(dns.asked.length).toBe(asked);
  });

  it("400 for members in its body, 413 for a body over 64 KiB", async () => {
    const d = await addDomain();
    const r = await req("POST", `/domains/${d.id}/verify`, { verified: true });
    expect(r.status).toBe(400);
    expect(r.json.fields).toHaveProperty("verified");
    const big = await http(`${t.api}/domains/${d.id}/verify`, {
      method: "POST",
      body: `{"x":"${"a".repeat(70_000)}"}`,
      headers: { ...alice.auth, "content-type": "application/json" },
    });
    expect(big.status).toBe(413);
  });

  it("404 for another workspace's domain and for an unknown id", async () => {
    const d = await addDomain(uniqueName(), bob.auth);
    dns.txt.set(d.verification.name, [d.verification.value]);
    expect((await req("POST", `/domains/${d.id}/verify`)).json).toEqual({ error: "NOT_FOUND" });
    expect((await req("POST", `/domains/${d.id}/verify`)).status).toBe(404);
    expect((await req("POST", "/domains/zzzzzzzz/verify")).status).toBe(404);
    expect((await t.app.db.select().from(domains).where(eq(domains.id, d.id)))[0].verified).toBe(false);
  });
});

describe("PATCH /domains/{id}", () => {
  freshAlice();
  it("400 for a not_found_url on the domain itself, listed with the schema's failures", async () => {
    const d = await addDomain();
    const r = await req("PATCH", `/domains/${d.id}`, { not_found_url: `https://${d.name}/x`, bogus: 1 });
    expect(r.status).toBe(400);
    expect(Object.keys(r.json.fields).sort()).toEqual(["bogus", "not_found_url"]);
    expect((await req("GET", "/domains")).json.domains.find((x: Domain) => x.id === d.id).not_found_url).toBeNull();
  });

  it("sets and clears not_found_url", async () => {
    const d = await addDomain();
    const set = await req("PATCH", `/domains/${d.id}`, { not_found_url: "https://www.acme.example/missing" });
    expect(set.status).toBe(200);
    expect(set.json).toEqual({ ...d, not_found_url: "https://www.acme.example/missing" });
    const cleared = await req("PATCH", `/domains/${d.id}`, { not_found_url: null });
    expect(cleared.json.not_found_url).toBeNull();
  });

  it.each([
    ["not a URL", { not_found_url: "nope" }, "not_found_url"],
    ["not http(s)", { not_found_url: "ftp://x.example/" }, "not_found_url"],
    ["an unknown member", { name: "other.example" }, "name"],
    ["no member", {}, "body"],
  ])("400 for %s", async (_what, json, field) => {
    const d = await addDomain();
    const r = await req("PATCH", `/domains/${d.id}`, json);
    expect(r.status).toBe(400);
    expect(r.json.fields).toHaveProperty(field);
  });

  it("400 for a not_found_url on the domain itself (a loop) or on the redirect domain", async () => {
    const d = await addDomain();
    for (const url of [`https://${d.name}/x`, `http://${d.name.toUpperCase()}/`, `${t.redirect}/abcd`]) {
      const r = await req("PATCH", `/domains/${d.id}`, { not_found_url: url });
      expect(r.status, url).toBe(400);
      expect(r.json.fields).toHaveProperty("not_found_url");
    }
  });

  it("404 for another workspace's domain", async () => {
    const d = await addDomain(uniqueName(), bob.auth);
    expect((await req("PATCH", `/domains/${d.id}`, { not_found_url: "https://x.example/" })).status).toBe(404);
  });
});

describe("DELETE /domains/{id}", () => {
  freshAlice();
  it("removes the domain (204); it is gone from the list and its name can be added again", async () => {
    const d = await addDomain();
    const r = await req("DELETE", `/domains/${d.id}`);
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
    expect((await req("GET", "/domains")).json.domains.map((x: Domain) => x.id)).not.toContain(d.id);
    expect((await req("DELETE", `/domains/${d.id}`)).status).toBe(404);
    expect((await addDomain(d.name, bob.auth)).name).toBe(d.name);
  });

  it("409 DOMAIN_IN_USE while live links use it; 204 once they are deleted", async () => {
    const d = await verifiedDomain();
    const link = await newLink({ domain: d.name });
    const r = await req("DELETE", `/domains/${d.id}`);
    expect(r.status).toBe(409);
    expect(r.json).toEqual({ error: "DOMAIN_IN_USE" });
    expect((await req("GET", "/domains")).json.domains.map((x: Domain) => x.id)).toContain(d.id);
    expect((await req("DELETE", `/links/${link.id}`)).status).toBe(204);
    expect((await req("DELETE", `/domains/${d.id}`)).status).toBe(204);
    // The deleted link keeps its record.
    expect((await req("GET", `/links/${link.id}`)).json.deleted_at).toEqual(expect.any(Number));
  });

  it("archived links are not live: the domain goes, and they are deleted with it (their records and clicks kept)", async () => {
    const d = await verifiedDomain();
    const archived = await newLink({ domain: d.name });
    const live = await newLink({ domain: d.name });
    expect((await req("PATCH", `/links/${archived.id}`, { archived: true })).status).toBe(200);
    expect((await req("DELETE", `/domains/${d.id}`)).status).toBe(409); // one live link is still on it
    expect((await req("PATCH", `/links/${live.id}`, { archived: true })).status).toBe(200);
    expect((await req("DELETE", `/domains/${d.id}`)).status).toBe(204);
    for (const l of [archived, live]) expect((await req("GET", `/links/${l.id}`)).json.deleted_at, l.id).toEqual(expect.any(Number));
    expect((await req("GET", "/domains")).json.domains.map((x: Domain) => x.id)).not.toContain(d.id);
  });

  it("404 for another workspace's domain", async () => {
    const d = await addDomain(uniqueName(), bob.auth);
    expect((await req("DELETE", `/domains/${d.id}`)).status).toBe(404);
    expect(await storedNames()).toContain(d.name);
  });
});

describe("links on branded domains", () => {
  freshAlice();
  it("POST /links with `domain`: redirect_domain is its name, short_url CUSTOM_DOMAIN_SCHEME://<name>/<slug>", async () => {
    const d = await verifiedDomain();
    const link = await newLink({ domain: d.name, slug: "launch" });
    expect(link).toMatchObject({ slug: "launch", redirect_domain: d.name, short_url: `https://${d.name}/launch` });
    expect(link).not.toHaveProperty("domain");
    const listed = (await req("GET", "/links")).json.links.find((l: { id: string }) => l.id === link.id);
    expect(listed).toMatchObject({ redirect_domain: d.name, short_url: `https://${d.name}/launch` });
    expect((await req("GET", `/links/${link.id}`)).json).toMatchObject({ short_url: `https://${d.name}/launch` });
  });

  it("CUSTOM_DOMAIN_SCHEME=http gives http:// short URLs", async () => {
    const s = await createTestApp({ DNS_SERVERS: dns.address, CUSTOM_DOMAIN_SCHEME: "http" });
    try {
      const u = await s.user();
      const d = await s.caller(u.auth).domain.create({ name: uniqueName() });
      dns.txt.set(d.verification.name, [d.verification.value]);
      await s.caller(u.auth).domain.verify({ id: d.id });
      const link = await s.caller(u.auth).link.create({ url: "https://dest.example/", domain: d.name, slug: "x" });
      expect(link.short_url).toBe(`http://${d.name}/x`);
    } finally {
      await s.close();
    }
  });

  it("null or absent `domain` is the default redirect domain", async () => {
    for (const json of [{}, { domain: null }]) {
      const link = await newLink(json);
      expect(link.redirect_domain).toBe(t.app.config.redirectDomain);
      expect(link.short_url).toBe(`${t.redirect}/${link.slug}`);
    }
  });

  it("400 VALIDATION_FAILED naming `domain` for an unknown, unverified or another workspace's domain, and without authentication", async () => {
    const unverified = await addDomain();
    const bobs = await verifiedDomain(uniqueName(), bob.auth);
    const count = async () => (await t.app.db.select({ n: sql<number>`count(*)::int` }).from(links))[0].n;
    const before = await count();
    for (const [domain, auth] of [
      ["nowhere.example", alice.auth],
      [unverified.name, alice.auth],
      [bobs.name, alice.auth],
      [bobs.name, {}],
      [bobs.name.toUpperCase(), bob.auth],
      [42, alice.auth],
    ] as const) {
      const r = await req("POST", "/links", { url: "https://dest.example/", domain }, auth);
      expect(r.status, String(domain)).toBe(400);
      expect(r.json.error).toBe("VALIDATION_FAILED");
      expect(Object.keys(r.json.fields)).toEqual(["domain"]);
    }
    expect(await count()).toBe(before);
  });

  it("each domain has its own slug namespace: one slug on the default domain and on two branded ones", async () => {
    const d1 = await verifiedDomain();
    const d2 = await verifiedDomain();
    const slug = `same-${randomBytes(3).toString("hex")}`;
    const a = await newLink({ slug });
    const b = await newLink({ slug, domain: d1.name });
    const c = await newLink({ slug, domain: d2.name });
    expect(new Set([a.id, b.id, c.id]).size).toBe(3);
    expect([a.short_url, b.short_url, c.short_url]).toEqual([`${t.redirect}/${slug}`, `https://${d1.name}/${slug}`, `https://${d2.name}/${slug}`]);
  });

  it("409 LINK_ID_ALREADY_IN_USE for a slug taken on that domain (by any link on it)", async () => {
    const d = await verifiedDomain();
    await newLink({ slug: "taken", domain: d.name });
    const r = await req("POST", "/links", { url: "https://dest.example/", slug: "taken", domain: d.name });
    expect(r.status).toBe(409);
    expect(r.json).toEqual({ error: "LINK_ID_ALREADY_IN_USE" });
  });

  it("generated slugs on a branded domain are 4 characters of [0-9a-z], distinct, and leave the default namespace's counts alone", async () => {
    const d = await verifiedDomain();
    const free = async () => (await t.app.db.select({ n: sql<number>`sum(${slugBlocks.free})::int` }).from(slugBlocks))[0].n;
    const before = await free();
    const made = [];
    for (let i = 0; i < 20; i++) made.push((await newLink({ domain: d.name })).slug);
    for (const s of made) expect(s).toMatch(/^[0-9a-z]{4}$/);
    expect(new Set(made).size).toBe(20);
    expect(await free()).toBe(before);
  });

  // The whole 36⁴ namespace is 1.68M rows: half a minute on PostgreSQL, a minute or more on PGlite (several
  // on a busy machine), so PostgreSQL only; on PGlite the next test runs the same SQL to exhaustion in a
  // one-character namespace.
  it.runIf(process.env.DATABASE_URL)(
    "a generated slug on a branded domain is never one in use there: the last free one is found, then 503 SLUGS_EXHAUSTED",
    async () => {
      const d = await verifiedDomain();
      const [w] = await t.app.db.select({ workspaceId: domains.workspaceId }).from(domains).where(eq(domains.id, d.id));
      const B = "0123456789abcdefghijklmnopqrstuvwxyz";
      const ch = (k: number) => sql.raw(`substr('${B}', n / ${k} % 36 + 1, 1)`);
      // Every 4-character slug but `q7x2` (number 1,223,318) is taken on this domain, one statement per
      // first character. Distinct URLs: links.url has a hash index, slow with a million equal keys.
      for (let first = 0; first < 36; first++) {
        await t.app.db.execute(sql`insert into links (id, workspace_id, domain_id, slug, url, created_at, updated_at)
          select 'f' || lpad(n::text, 7, '0'), ${w.workspaceId}, ${d.id}, ${ch(46656)} || ${ch(1296)} || ${ch(36)} || ${ch(1)}, 'https://dest.example/' || n, 0, 0
          from generate_series(${first * 46656}::int, ${first * 46656 + 46655}::int) n where n <> 1223318`);
      }
      expect((await newLink({ domain: d.name })).slug).toBe("q7x2");
      const full = await req("POST", "/links", { url: "https://dest.example/", domain: d.name });
      expect(full.status).toBe(503);
      expect(full.json).toEqual({ error: "SLUGS_EXHAUSTED" });
      // The default domain is not affected.
      expect((await newLink({})).slug).toMatch(/^[0-9a-z]{4}$/);
    },
    300_000,
  );

  it("picks free slugs by random tries, then by a scan, never one in use, then SLUGS_EXHAUSTED (a one-character namespace to fill)", async () => {
    const d = await verifiedDomain();
    const [w] = await t.app.db.select({ workspaceId: domains.workspaceId }).from(domains).where(eq(domains.id, d.id));
    const taken = new Set<string>();
    for (let i = 0; i < 36; i++) {
      const slug = await pickFreeDomainSlug(t.app.db, d.id, 1);
      expect(slug).toMatch(/^[0-9a-z]$/);
      expect(taken.has(slug)).toBe(false);
      taken.add(slug);
      await t.app.db.insert(links).values({
        id: `p${randomBytes(4).toString("hex").slice(0, 7)}`,
        workspaceId: w.workspaceId,
        domainId: d.id,
        slug,
        url: "https://d.example/",
        createdAt: 0,
        updatedAt: 0,
      });
    }
    await expect(pickFreeDomainSlug(t.app.db, d.id, 1)).rejects.toMatchObject({ publicCode: "SLUGS_EXHAUSTED" });
    await t.app.db.delete(links).where(eq(links.domainId, d.id));
  });

  it("PATCH /links/{id} `domain` moves a link to a domain and back (null), with its slug", async () => {
    const d = await verifiedDomain();
    const link = await newLink({ slug: `mv-${randomBytes(3).toString("hex")}` });
    const moved = await req("PATCH", `/links/${link.id}`, { domain: d.name });
    expect(moved.status).toBe(200);
    expect(moved.json).toMatchObject({ slug: link.slug, redirect_domain: d.name, short_url: `https://${d.name}/${link.slug}` });
    // The default domain's slug is free again.
    expect((await newLink({ slug: link.slug })).redirect_domain).toBe(t.app.config.redirectDomain);
    const back = await req("PATCH", `/links/${link.id}`, { domain: null });
    expect(back.status).toBe(409);
    expect(back.json).toEqual({ error: "LINK_ID_ALREADY_IN_USE" });
    const renamed = await req("PATCH", `/links/${link.id}`, { domain: null, slug: `${link.slug}-2` });
    expect(renamed.status).toBe(200);
    expect(renamed.json).toMatchObject({ redirect_domain: t.app.config.redirectDomain, short_url: `${t.redirect}/${link.slug}-2` });
  });

  it("PATCH /links/{id}: 409 for a slug taken on the target domain; 400 naming `domain` for one not usable", async () => {
    const d = await verifiedDomain();
    const unverified = await addDomain();
    await newLink({ slug: "dup", domain: d.name });
    const link = await newLink({ slug: `dup-${randomBytes(3).toString("hex")}` });
    const r = await req("PATCH", `/links/${link.id}`, { slug: "dup", domain: d.name });
    expect(r.status).toBe(409);
    const u = await req("PATCH", `/links/${link.id}`, { domain: unverified.name });
    expect(u.status).toBe(400);
    expect(Object.keys(u.json.fields)).toEqual(["domain"]);
    expect((await req("GET", `/links/${link.id}`)).json).toMatchObject({ slug: link.slug, redirect_domain: t.app.config.redirectDomain });
  });

  it("a link's url must not point at its own branded domain (no loops)", async () => {
    const d = await verifiedDomain();
    const r = await req("POST", "/links", { url: `https://${d.name}/other`, domain: d.name });
    expect(r.status).toBe(400);
    expect(r.json.fields).toHaveProperty("url");
  });

  it("POST /links/bulk items accept `domain` like POST /links", async () => {
    const d = await verifiedDomain();
    const r = await req("POST", "/links/bulk", {
      links: [
        { url: "https://dest.example/1", domain: d.name },
        { url: "https://dest.example/2", domain: "nope.example" },
      ],
    });
    if (r.status === 404) return; // bulk is built alongside; nothing to check without it
    expect(r.status).toBe(200);
    expect(r.json.created[0].redirect_domain).toBe(d.name);
    expect(r.json.errors[0]).toMatchObject({ index: 1, error: "VALIDATION_FAILED", fields: { domain: expect.any(Array) } });
  });
});

describe("/openapi.json", () => {
  it("declares the domain operations with every status they answer, and `domain` on link bodies", async () => {
    const doc = (await http(`${t.api}/openapi.json`)).json;
    const statuses = (path: string, method: string) => Object.keys(doc.paths[path][method].responses).sort();
    expect(statuses("/domains", "get")).toEqual(["200", "400", "401", "403", "429", "500", "503"]);
    expect(statuses("/domains", "post")).toEqual(["201", "400", "401", "403", "409", "413", "429", "500", "503"]);
    expect(statuses("/domains/{id}/verify", "post")).toEqual(["200", "400", "401", "403", "404", "409", "413", "429", "500", "503"]);
    expect(doc.paths["/domains"].post.description).toMatch(/DOMAIN_LIMIT/);
    expect(doc.paths["/domains/{id}/verify"].post.description).toMatch(/DOMAIN_TAKEN/);
    expect(doc.paths["/domains"].post.responses["409"].description).toMatch(/DOMAIN_LIMIT/);
    expect(statuses("/domains/{id}", "patch")).toEqual(["200", "400", "401", "403", "404", "413", "429", "500", "503"]);
    expect(statuses("/domains/{id}", "delete")).toEqual(["204", "400", "401", "403", "404", "409", "429", "500", "503"]);
    // The answer refers to the Domain schema, named once in components.
    expect(doc.paths["/domains"].post.responses["201"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Domain" });
    const domain = doc.components.schemas.Domain;
    expect(Object.keys(domain.properties).sort()).toEqual(["created_at", "id", "name", "not_found_url", "verification", "verified", "verified_at"]);
    expect(domain.properties.not_found_url.format).toBe("uri");
    expect(doc.paths["/links"].post.requestBody.content["application/json"].schema.properties).toHaveProperty("domain");
    expect(doc.paths["/links/{id}"].patch.requestBody.content["application/json"].schema.properties).toHaveProperty("domain");
    expect(doc.tags.map((x: { name: string }) => x.name)).toContain("domains");
  });
});
