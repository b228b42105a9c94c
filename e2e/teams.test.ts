import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeFor, launch, newPage, shot, signIn, startServer, USER_AGENT, type Server } from "./harness";

/**
 * Teams in Chromium: an owner makes a workspace and invites a second person, who
 * opens the mailed link in another browser, signs in there with the mailed code, accepts, and
 * edits a link of the shared workspace. The second person's browser is phone-sized.
 */
let server: Server;
let browser: Browser;
let ownerCtx: BrowserContext, memberCtx: BrowserContext;
let owner: Page & { problems: string[] }, member: Page & { problems: string[] };
const stamp = Date.now().toString(36);
const ownerEmail = `owner-${stamp}@example.com`;
const memberEmail = `member-${stamp}@example.com`;
const slug = `team-${stamp}`;
let acceptUrl = "";

/** The accept link of the newest invitation mailed to `to` (the only URL with /invites/ in it). */
async function invitationLink(to: string): Promise<string> {
  const dir = path.join(server.dataDir, "outbox");
  const deadline = Date.now() + 10_000;
  for (;;) {
    const mails = readdirSync(dir)
      .map((f) => JSON.parse(readFileSync(path.join(dir, f), "utf8")) as { to: string; text: string; created_at: number })
      .filter((m) => m.to === to && m.text.includes("/invites/"))
      .sort((a, b) => b.created_at - a.created_at);
    const url = mails[0]?.text.match(/https?:\/\/\S*\/invites\/[0-9A-Za-z]{32}/)?.[0];
    if (url) return url;
    if (Date.now() > deadline) throw new Error(`no invitation mailed to ${to}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  server = await startServer();
  browser = await launch();
  ownerCtx = await browser.newContext({ viewport: { width: 1280, height: 900 }, userAgent: USER_AGENT });
  memberCtx = await browser.newContext({ viewport: { width: 390, height: 844 }, userAgent: USER_AGENT });
  owner = await newPage(ownerCtx);
  member = await newPage(memberCtx);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe("teams in Chromium", () => {
  it("the owner creates a workspace from the switcher's link and invites a second person by e-mail", async () => {
    await signIn(owner, server, ownerEmail);
    const bar = owner.getByTestId("workspace-switcher");
    expect(await bar.textContent()).toContain("Personal");
    await bar.getByRole("link", { name: "New workspace" }).click();
    await owner.waitForURL(/\/workspaces$/);
    await owner.getByLabel("Name").fill("Acme Marketing");
    await owner.getByRole("button", { name: "Create workspace" }).click();
    await owner.waitForURL(/\/workspaces\/[0-9a-z]{8}\?created=1/);
    await owner.getByLabel("E-mail").fill(memberEmail.toUpperCase());
    await owner.getByLabel("Role", { exact: true }).selectOption("member");
    await owner.getByRole("button", { name: "Send invitation" }).click();
    await owner.getByText(`Invitation sent to ${memberEmail}`).waitFor();
    await shot(owner, "teams-01-members-invited");
    await owner.getByTestId("invite-row").filter({ hasText: memberEmail }).waitFor();
    acceptUrl = await invitationLink(memberEmail);
    expect(acceptUrl.startsWith(`${server.appUrl}/invites/`)).toBe(true);
    await shot(owner, "teams-01-members-invited");
    expect(owner.problems).toEqual([]);
  });

  it("the owner switches to the workspace with the header's switcher and creates a link there", async () => {
    await owner.goto(`${server.appUrl}/links`);
    await owner.getByLabel("Workspace", { exact: true }).selectOption({ label: "Acme Marketing" });
    await owner.getByRole("button", { name: "Switch" }).click();
    await owner.waitForURL(/\/links$/);
    expect(await owner.getByLabel("Workspace", { exact: true }).locator("option:checked").textContent()).toBe("Acme Marketing");
    await owner.goto(`${server.appUrl}/links/new`);
    await owner.getByLabel("Destination URL").fill("https://example.com/launch");
    await owner.getByLabel("Custom slug").fill(slug);
    await owner.getByRole("button", { name: "Create link" }).click();
    await owner.waitForURL(/\/links\/[0-9a-z]{8}\?created=1/);
    await shot(owner, "teams-02-switched");
  });

  it("a signed-out visitor of the mailed link sees what it is for and signs in as the invited address", async () => {
    await member.goto(acceptUrl);
    await member.getByRole("heading", { name: "Join Acme Marketing" }).waitFor();
    expect(await member.textContent("main")).toContain(`invited ${memberEmail} to the workspace Acme Marketing as a member`);
    await shot(member, "teams-03-invitation-signed-out-390px");
    const started = Date.now();
    await member.getByRole("button", { name: `Sign in as ${memberEmail}` }).click();
    await member.getByLabel("Code").waitFor();
    await member.getByLabel("Code").fill(await codeFor(server.dataDir, memberEmail, started));
    await member.getByRole("button", { name: "Sign in" }).click();
    // Back on the invitation, now signed in.
    await member.waitForURL(acceptUrl);
    await member.getByRole("button", { name: "Accept and join Acme Marketing" }).waitFor();
    await shot(member, "teams-04-invitation-signed-in-390px");
    expect(member.problems).toEqual([]);
  });

  it("accepts, lands in the shared workspace and edits the owner's link there", async () => {
    await member.getByRole("button", { name: "Accept and join Acme Marketing" }).click();
    await member.waitForURL(/\/links\?joined=1/);
    expect(await member.getByLabel("Workspace", { exact: true }).locator("option:checked").textContent()).toBe("Acme Marketing");
    const row = member.getByTestId("link-row").filter({ hasText: slug });
    await row.waitFor();
    await shot(member, "teams-05-member-links-390px");
    await row.getByRole("link", { name: /^Edit/ }).click();
    await member.waitForURL(/\/links\/[0-9a-z]{8}$/);
    await member.getByLabel("Destination URL").fill("https://example.com/launch?edited=member");
    await member.getByRole("button", { name: "Save changes" }).click();
    await member.getByText("Saved.").waitFor();
    // The owner sees the member's edit.
    await owner.reload();
    await owner.getByLabel("Destination URL").waitFor();
    expect(await owner.getByLabel("Destination URL").inputValue()).toBe("https://example.com/launch?edited=member");
    // A token made now acts in the shared workspace, and the page says so.
    await member.goto(`${server.appUrl}/settings/tokens`);
    expect(await member.getByTestId("token-workspace").textContent()).toContain("Acme Marketing");
    expect(member.problems).toEqual([]);
  });

  it("the members page shows both people with their roles, readable at phone width", async () => {
    await member.getByTestId("workspace-switcher").getByRole("link", { name: "Members (2)" }).click();
    await member.waitForURL(/\/workspaces\/[0-9a-z]{8}$/);
    const rows = member.getByTestId("member-row");
    // The URL changes before the client-side navigation has rendered the page: wait for its rows.
    await rows.first().waitFor();
    expect(await rows.count()).toBe(2);
    expect(await rows.filter({ hasText: ownerEmail }).textContent()).toContain("Owner");
    expect(await rows.filter({ hasText: memberEmail }).textContent()).toContain("Member");
    // A member manages no one: no role or remove buttons, but can leave.
    expect(await member.getByRole("button", { name: /^Remove / }).count()).toBe(0);
    expect(await member.getByText("Leave this workspace").count()).toBe(1);
    // Nothing wider than the phone's screen.
    expect(await member.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await shot(member, "teams-06-members-390px");
  });

  it("an invitation opened while signed in as someone else says so in plain words", async () => {
    await owner.goto(`${server.appUrl}/workspaces`);
    await owner.getByRole("link", { name: "Members of Acme Marketing" }).click();
    const third = `third-${stamp}@example.com`;
    await owner.getByLabel("E-mail").fill(third);
    await owner.getByRole("button", { name: "Send invitation" }).click();
    await owner.getByText(`Invitation sent to ${third}`).waitFor();
    await member.goto(await invitationLink(third));
    await member.getByText(`This invitation is for ${third}; you are signed in as ${memberEmail}.`).waitFor();
    await shot(member, "teams-07-invitation-mismatch-390px");
    // The used link no longer works.
    await member.goto(acceptUrl);
    await member.getByRole("heading", { name: "This invitation link does not work" }).waitFor();
  });

  it("the owner removes the member, whose next page is back in their personal workspace", async () => {
    // Removing asks for a tick first: one click on the row does nothing yet.
    const row = owner.getByTestId("member-row").filter({ hasText: memberEmail });
    await row.locator("summary", { hasText: "Remove" }).click();
    await row.getByLabel(`Yes, remove ${memberEmail}: their access ends at once.`).check();
    await owner.getByRole("button", { name: `Remove ${memberEmail}` }).click();
    await owner.getByText("Removed. Their access ended at once.").waitFor();
    await shot(owner, "teams-08-member-removed");
    // The owner's page, with its forms, at phone width too.
    await owner.setViewportSize({ width: 390, height: 844 });
    await owner.reload();
    expect(await owner.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await shot(owner, "teams-09-owner-members-390px");
    await member.goto(`${server.appUrl}/links`);
    expect(await member.getByTestId("workspace-switcher").textContent()).toContain("Personal");
    expect(await member.getByTestId("link-row").count()).toBe(0);
    expect(owner.problems).toEqual([]);
  });
});
