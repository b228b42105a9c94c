import { describe, expect, it } from "vitest";
import { createMailer, inertName, inviteMail } from "./mail";
import { smtpCapture } from "./smtp-capture.test-helper";

describe("names in mail are inert: nothing a mail client turns into a link", () => {
  it.each([
    ["Acme", "Acme"],
    ["acme.com", "acme[.]com"],
    ["https://evil.example/x", "https[://]evil[.]example/x"],
    ["www.evil.example", "www[.]evil[.]example"],
    ["me@evil.example", "me[at]evil[.]example"],
    ["full-width ｅｖｉｌ．ｅｘａｍｐｌｅ and ideographic 。 and ＠", "full-width ｅｖｉｌ[.]ｅｘａｍｐｌｅ and ideographic [.] and [at]"],
    ["one\r\nBcc: x\u2028line", "one Bcc: x line"],
  ])("%j → %j", (name, expected) => {
    expect(inertName(name)).toBe(expected);
  });

  it("the invitation's subject never holds the inviter's or the workspace's text", () => {
    const a = inviteMail("a@example.com", { workspace: "evil.example", invitedBy: "Mallory", role: "member", acceptUrl: "http://app/invites/x" });
    const b = inviteMail("a@example.com", { workspace: "Acme", invitedBy: null, role: "owner", acceptUrl: "http://app/invites/y" });
    expect(a.subject).toBe(b.subject);
    expect(a.subject).not.toMatch(/evil|Mallory/);
  });
});

it("the invitation says the role it gives: owner, member or viewer", () => {
  const roles = (["owner", "member", "viewer"] as const).map((role) =>
    inviteMail("a@example.com", { workspace: "Acme", invitedBy: null, role, acceptUrl: "http://app/i" }),
  );
  expect(roles.map((m) => /as (an owner|a member|a viewer)/.exec(m.text)?.[1])).toEqual(["an owner", "a member", "a viewer"]);
  expect(roles[2].html).toContain("as a viewer");
});

it("a mail written to the outbox is logged without its recipient's address (logs hold no personal data)", async () => {
  const { mkdtempSync } = await import("node:fs");
  const os = await import("node:os");
  const path = await import("node:path");
  const lines: string[] = [];
  const { pino } = await import("pino");
  const log = pino({ level: "info" }, { write: (s: string) => void lines.push(s) });
  const mailer = createMailer({ dataDir: mkdtempSync(path.join(os.tmpdir(), "mail-")), log });
  await mailer.send({ to: "victim.person@example.com", subject: "Your sign-in code", text: "123456", html: "<p>123456</p>" });
  expect(lines.join("\n")).toContain("mail written to outbox");
  expect(lines.join("\n")).not.toContain("victim.person");
});

describe("the sender of every mail", () => {
  it("is MAIL_FROM's address when set, as the SMTP relay receives it", async () => {
    const { createServer } = await import("node:net");
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const smtp = await smtpCapture(port);
    const received = smtp.received;
    const mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${port}`, dataDir: "/nonexistent", from: "Acme Links <links@acme.example>" });
    try {
      await mailer.send({ to: "someone@example.com", subject: "Hello", text: "Hi", html: "<p>Hi</p>" });
      expect(received).toHaveLength(1);
      expect(received[0].from).toBe("links@acme.example");
      expect(received[0].raw).toMatch(/^From: Acme Links <links@acme\.example>/m);
    } finally {
      mailer.close();
      await smtp.close();
    }
  });
});
