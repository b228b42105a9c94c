import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { invitationLink, launch, newPage, shot, signIn, startServer, USER_AGENT, type Server } from "./harness";

// A teammate's link opened while one's session is in another workspace opens in its own workspace
// (switching, and saying so), for that session only: a new sign-in starts in the personal one. Also
// the domain field's normalisation, as a person sees it.
let server: Server;
let browser: Browser;
const contexts: BrowserContext[] = [];
const stamp = Date.now().toString(36);
const ownerEmail = `lead-${stamp}@example.com`;
const memberEmail = `mate-${stamp}@example.com`;

async function page(width = 1280) {
  const ctx = await browser.newContext({ viewport: { width, height: 900 }, userAgent: USER_AGENT });
  contexts.push(ctx);
  return newPage(ctx);
}
const switchTo = async (p: Awaited<ReturnType<typeof page>>, label: string) => {
  await p.goto(`${server.appUrl}/links`);
  await p.getByLabel("Workspace", { exact: true }).selectOption({ label });
  // The page is at /links before the switch too, and the select shows the choice at once: wait for
  // the switch itself to be answered.
  await Promise.all([
    p.waitForResponse((r) => r.request().method() === "POST" && r.url().includes("/workspaces/switch")),
    p.getByRole("button", { name: "Switch" }).click(),
  ]);
  await p.waitForLoadState("networkidle");
  await expect.poll(() => current(p)).toBe(label);
};
const current = (p: Awaited<ReturnType<typeof page>>) => p.getByLabel("Workspace", { exact: true }).locator("option:checked").textContent();

beforeAll(async () => {
  server = await startServer();
  browser = await launch();
});
afterAll(async () => {
  for (const c of contexts) await c.close();
  await browser?.close();
  await server?.stop();
});

describe("team links across workspaces", () => {
  it("a teammate's link opened from another workspace opens there, saying so; a new sign-in starts in the personal workspace", async () => {
    const owner = await page();
    await signIn(owner, server, ownerEmail);
    await owner.goto(`${server.appUrl}/workspaces`);
    await owner.getByLabel("Name").fill("Acme Ops");
    await owner.getByRole("button", { name: "Create workspace" }).click();
    await owner.waitForURL(/\/workspaces\/[0-9a-z]{8}\?created=1/);
    await owner.getByLabel("E-mail").fill(memberEmail);
    await owner.getByLabel("Role", { exact: true }).selectOption("member");
    await owner.getByRole("button", { name: "Send invitation" }).click();
    await owner.getByText(`Invitation sent to ${memberEmail}`).waitFor();
    await switchTo(owner, "Acme Ops");
    await owner.goto(`${server.appUrl}/links/new`);
    await owner.getByLabel("Destination URL").fill("https://example.com/ops");
    await owner.getByLabel("Custom slug").fill(`ops-${stamp}`);
    await owner.getByRole("button", { name: "Create link" }).click();
    await owner.waitForURL(/\/links\/[0-9a-z]{8}\?created=1/);
    const linkUrl = owner.url().replace(/\?.*$/, "");

    const member = await page(390);
    await signIn(member, server, memberEmail);
    await member.goto(await invitationLink(server.dataDir, memberEmail));
    await member.getByRole("button", { name: "Accept and join Acme Ops" }).click();
    await member.waitForURL(/\/links\?joined=1/);
    await switchTo(member, "Personal");
    expect(await current(member)).toBe("Personal");

    // The owner's address, opened in the member's personal workspace.
    await member.goto(linkUrl);
    await member.getByText("Switched to workspace Acme Ops to open this link.").waitFor();
    expect(await member.getByRole("heading", { name: `ops-${stamp}` }).count()).toBe(1);
    expect(await current(member)).toBe("Acme Ops");
    expect(await member.textContent("body")).not.toContain("Not found");
    await shot(member, "team-links-switched-390px");

    // The link's analytics, opened from the personal workspace, switch the same way.
    await switchTo(member, "Personal");
    const linkId = linkUrl.split("/").pop()!;
    await member.goto(`${server.appUrl}/analytics?link=${linkId}`);
    await member.getByText("Switched to workspace Acme Ops to open this link.").waitFor();
    expect(await member.getByRole("heading", { name: `Analytics · ops-${stamp}` }).count()).toBe(1);
    expect(await current(member)).toBe("Acme Ops");

    // Someone who is not a member still gets the page's 404.
    const stranger = await page();
    await signIn(stranger, server, `stranger-${stamp}@example.com`);
    const r = await stranger.goto(linkUrl);
    expect(r?.status()).toBe(404);

    // A new sign-in (another browser) starts in the personal workspace; the switched one stays.
    const again = await page();
    await signIn(again, server, memberEmail);
    expect(await current(again)).toMatch(/personal/i);
    expect(member.problems).toEqual([]);
  });

  it("the domain field normalises a pasted URL or upper case to the host name and shows it", async () => {
    const p = await page(390);
    await signIn(p, server, `domains-${stamp}@example.com`);
    await p.goto(`${server.appUrl}/domains`);
    await p.getByLabel("Domain name").fill(`https://Links-${stamp}.Acme.test/`);
    await p.getByRole("button", { name: "Add domain" }).click();
    await p.getByText(`links-${stamp}.acme.test added.`).waitFor();
    await p.getByLabel("Domain name").fill(`GO-${stamp}.ACME.TEST`);
    await p.getByRole("button", { name: "Add domain" }).click();
    await p.getByText(`go-${stamp}.acme.test added.`).waitFor();
    // What normalising cannot mend is named, with the normalised name left in the field.
    await p.getByLabel("Domain name").fill(`https://${"a".repeat(64)}.Acme.test/x`);
    await p.getByRole("button", { name: "Add domain" }).click();
    await p.getByText("each label must be at most 63 characters").waitFor();
    expect(await p.getByLabel("Domain name").inputValue()).toBe(`${"a".repeat(64)}.acme.test`);
    expect(await p.textContent("body")).not.toMatch(/POST \/domains|Required/);
  });
});
