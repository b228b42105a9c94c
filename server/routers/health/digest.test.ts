import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memberships } from "../../../db/schema";
import type { ProbeResult } from "../../core/health-probe";
import { outbox } from "../auth/sign-in.test-helper";
import { createTestApp, type TestApp, type TestUser } from "../../test/harness";
import { insertLink } from "../links/links.service";
import { DIGEST_GATHER_MS, sendHealthDigests } from "./digest";
import { recordCheck } from "./health.service";

let t: TestApp;
const HOUR = 3600_000;
/** Noon UTC of a fixed day, so "the same day" and "the next day" do not depend on when the tests run. */
const NOON = Date.UTC(2031, 4, 14, 12);

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

const failed = (url: string): ProbeResult => ({ url, status: "failed", http_status: 404, error: "HTTP 404" });
const mailsTo = (u: TestUser) => outbox({ app: t.app } as never, u.email).filter((m) => /stopped working/.test(m.subject));

/** A link of `u`'s workspace made broken at `at`: two failed checks in a row. */
async function brokenLink(u: TestUser, at: number, title?: string) {
  const link = await insertLink(t.app.db, { workspaceId: u.workspaceId, url: `https://dead.example/${Math.random().toString(36).slice(2)}`, title });
  await recordCheck(t.app, link, [failed(link.url)], at - HOUR);
  await recordCheck(t.app, link, [failed(link.url)], at);
  return link;
}

describe("broken-links digest", () => {
  it("one mail to the owner lists the links that broke since the last digest", async () => {
    const u = await t.user();
    const a = await brokenLink(u, NOON, "Spring sale");
    const b = await brokenLink(u, NOON + 60_000);
    await sendHealthDigests(t.app, NOON + 60_000 + DIGEST_GATHER_MS);
    const mails = mailsTo(u);
    expect(mails).toHaveLength(1);
    expect(mails[0].subject).toBe("2 links stopped working");
    expect(mails[0].text).toContain("“Spring sale”");
    expect(mails[0].text).toContain(`/links/${a.id}`);
    expect(mails[0].text).toContain(`/links/${b.id}`);
    expect(mails[0].html).toContain(`/links/${b.id}`);
    // The next day's digest lists only what broke after this one.
    const c = await brokenLink(u, NOON + 6 * HOUR);
    await sendHealthDigests(t.app, NOON + 24 * HOUR);
    const next = mailsTo(u);
    expect(next).toHaveLength(2);
    expect(next[1].subject).toBe("1 link stopped working");
    expect(next[1].text).toContain(`/links/${c.id}`);
    expect(next[1].text).not.toContain(`/links/${a.id}`);
  });

  it("no mail when nothing newly broke", async () => {
    const u = await t.user();
    const a = await brokenLink(u, NOON);
    await sendHealthDigests(t.app, NOON + DIGEST_GATHER_MS);
    expect(mailsTo(u)).toHaveLength(1);
    await recordCheck(t.app, a, [failed(a.url)], NOON + 24 * HOUR); // still broken: not newly
    await sendHealthDigests(t.app, NOON + 48 * HOUR);
    expect(mailsTo(u)).toHaveLength(1);
    const fresh = await t.user();
    await insertLink(t.app.db, { workspaceId: fresh.workspaceId, url: "https://alive.example/" });
    await sendHealthDigests(t.app, NOON + 48 * HOUR);
    expect(mailsTo(fresh)).toHaveLength(0);
  });

  it("not twice the same day: what breaks later that day waits for the next day's mail", async () => {
    const u = await t.user();
    await brokenLink(u, NOON);
    await sendHealthDigests(t.app, NOON + DIGEST_GATHER_MS);
    const later = await brokenLink(u, NOON + 2 * HOUR);
    await sendHealthDigests(t.app, NOON + 2 * HOUR + DIGEST_GATHER_MS);
    // Several instances at once: still one mail.
    await Promise.all([sendHealthDigests(t.app, NOON + 11 * HOUR), sendHealthDigests(t.app, NOON + 11 * HOUR)]);
    expect(mailsTo(u)).toHaveLength(1);
    await Promise.all([sendHealthDigests(t.app, NOON + 13 * HOUR), sendHealthDigests(t.app, NOON + 13 * HOUR)]);
    const mails = mailsTo(u);
    expect(mails).toHaveLength(2);
    expect(mails[1].text).toContain(`/links/${later.id}`);
  });

  it("only the workspace's owners get it", async () => {
    const owner = await t.user();
    const coOwner = await t.user();
    const member = await t.user();
    const viewer = await t.user();
    await t.app.db.insert(memberships).values([
      { workspaceId: owner.workspaceId, userId: coOwner.id, role: "owner", joinedAt: NOON },
      { workspaceId: owner.workspaceId, userId: member.id, role: "member", joinedAt: NOON },
      { workspaceId: owner.workspaceId, userId: viewer.id, role: "viewer", joinedAt: NOON },
    ]);
    await brokenLink(owner, NOON);
    await sendHealthDigests(t.app, NOON + DIGEST_GATHER_MS);
    expect(mailsTo(owner)).toHaveLength(1);
    expect(mailsTo(coOwner)).toHaveLength(1);
    expect(mailsTo(member)).toHaveLength(0);
    expect(mailsTo(viewer)).toHaveLength(0);
  });

  it("names in the mail are inert and escaped", async () => {
    const u = await t.user();
    await brokenLink(u, NOON, `<b>evil.example</b>`);
    await sendHealthDigests(t.app, NOON + DIGEST_GATHER_MS);
    const [mail] = mailsTo(u);
    expect(mail.html).not.toContain("<b>");
    expect(mail.html).toContain("&#60;b&#62;evil[.]example");
    expect(mail.text).toContain("evil[.]example");
  });

  it("a digest no mail could go out for is sent at a later round, not lost", async () => {
    const u = await t.user();
    const a = await brokenLink(u, NOON);
    const send = t.app.mail.send;
    t.app.mail.send = () => Promise.reject(new Error("mail server down"));
    try {
      await sendHealthDigests(t.app, NOON + DIGEST_GATHER_MS);
    } finally {
      t.app.mail.send = send;
    }
    expect(mailsTo(u)).toHaveLength(0);
    await sendHealthDigests(t.app, NOON + DIGEST_GATHER_MS + 60_000);
    const mails = mailsTo(u);
    expect(mails).toHaveLength(1);
    expect(mails[0].text).toContain(`/links/${a.id}`);
  });
});
