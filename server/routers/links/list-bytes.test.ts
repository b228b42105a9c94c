import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { domains, type links } from "../../../db/schema";
import { newLinkId } from "../../lib/ids";
import { createTestServer, http, type TestServer, type TestUser } from "../../test/harness";
import { insertLink } from "./links.service";

/**
 * REST `GET /links` answers byte for byte as it did before the listing was made faster: links of
 * every kind, answered through every path (first answer and repeated answer), compared with the
 * bodies recorded in list-bytes.answers.json. Only what a run generates (link ids, times, the
 * redirect port, the cursor's hash) is replaced by a name before comparing.
 * LIST_BYTES_RECORD=1 writes the file instead (only ever from the code that defined the answers).
 */
const ANSWERS = path.join(import.meta.dirname, "list-bytes.answers.json");
const RECORD = process.env.LIST_BYTES_RECORD === "1";

let t: TestServer;
let u: TestUser;
const names = new Map<string, string>();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  t = await createTestServer();
  u = await t.user({ plan: "pro" });
  const now = Date.now();
  const domainId = newLinkId();
  await t.app.db
    .insert(domains)
    .values({ id: domainId, workspaceId: u.workspaceId, name: "brand.example", verificationValue: "x", verified: true, verifiedAt: now, createdAt: now });
  const kinds: [string, Partial<typeof links.$inferInsert>][] = [
    ["plain", { slug: "plain" }],
    ["password", { slug: "secret", passwordHash: "$argon2id$v=19$m=19456,t=2,p=1$x$y" }],
    [
      "targeting",
      {
        slug: "targeted",
        targeting: {
          geo: { DE: "https://example.de/", FR: "https://example.fr/a?b=c" },
          ios: "https://apps.apple.com/x",
          languages: { pt: "https://example.pt/" },
        },
      },
    ],
    [
      "variants",
      {
        slug: "ab",
        url: "https://example.com/a",
        variants: [
          { url: "https://example.com/a", weight: 30 },
          { url: "https://example.com/b", weight: 70 },
        ],
      },
    ],
    ["archived", { slug: "old", archivedAt: now }],
    ["title", { slug: "titled", title: 'A "quoted" title \\ with é, 😀 and\ttab' }],
    ["tags", { slug: "tagged", tags: ["alpha", "beta"] }],
    ["domain", { slug: "branded", domainId }],
    ["expiry", { slug: "expiring", expiresAt: 4102444800000, expirationUrl: "https://example.com/gone" }],
    ["expired", { slug: "expired", expiresAt: 1000 }],
    ["share-card", { slug: "card", ogTitle: "Card", ogDescription: "Line one\nline two", ogImage: "https://example.com/og.png" }],
    ["forward-query", { slug: "fwd", forwardQuery: true }],
    ["deleted", { slug: "gone" }],
  ];
  for (const [name, over] of kinds) {
    // Distinct creation times: the order (newest first) is the same on every run.
    await sleep(3);
    const row = await insertLink(t.app.db, { workspaceId: u.workspaceId, url: `https://example.com/${name}`, ...over });
    names.set(row.id, `<id:${name}>`);
    names.set(String(row.createdAt), `<t:${name}>`);
  }
  const deleted = [...names].find(([, n]) => n === "<id:deleted>")![0];
  // Deleted as DELETE /links/{id} deletes: the listing must leave it out.
  expect((await http(`${t.api}/links/${deleted}`, { method: "DELETE", headers: u.auth })).status).toBe(204);
});
afterAll(() => t?.close());

/** The body with the generated values named; `updated_at` of the deleted link moved, so any other time is named by position. */
function normalise(body: string): string {
  let out = body.replace(/127\.0\.0\.1:\d+/g, "<redirect>");
  out = out.replace(/"next_cursor":"[A-Za-z0-9_-]+"/g, '"next_cursor":"<cursor>"');
  for (const [value, name] of names) out = out.split(value).join(name);
  return out;
}

const QUERIES = [
  "",
  "?limit=100",
  "?limit=4",
  "?status=archived",
  "?tag=alpha",
  "?domain=brand.example",
  "?domain=default&limit=2",
  "?sort=clicks",
  "?status=expired",
];

async function answers(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const q of QUERIES) {
    // Twice: a second answer may come another way (a cache) and must be the same bytes.
    for (const pass of ["first", "again"]) {
      const r = await http(`${t.api}/links${q}`, { headers: u.auth });
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("application/json");
      out[`GET /links${q} (${pass})`] = normalise(r.text);
    }
  }
  // The second page, by the first page's cursor.
  const first = await http(`${t.api}/links?limit=4`, { headers: u.auth });
  const next = await http(`${t.api}/links?limit=4&cursor=${first.json.next_cursor}`, { headers: u.auth });
  out["GET /links?limit=4, second page"] = normalise(next.text);
  return out;
}

describe("REST GET /links answers", () => {
  it("every answer is byte-identical to the recorded one, for links of every kind", async () => {
    const got = await answers();
    if (RECORD) writeFileSync(ANSWERS, JSON.stringify(got, null, 2) + "\n");
    expect(existsSync(ANSWERS)).toBe(true);
    const want = JSON.parse(readFileSync(ANSWERS, "utf8")) as Record<string, string>;
    for (const key of Object.keys(want)) expect(got[key], key).toBe(want[key]);
    expect(Object.keys(got)).toEqual(Object.keys(want));
  });
});
