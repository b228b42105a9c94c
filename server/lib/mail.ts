import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import nodemailer from "nodemailer";
import type { Logger } from "./log";
import { randomString, BASE36 } from "./ids";

export type Mail = { to: string; subject: string; text: string; html: string };
export type Mailer = { send(mail: Mail): Promise<void>; close(): void };

/** SMTP through nodemailer when SMTP_URL is set; otherwise one JSON file per message in DATA_DIR/outbox. */
export function createMailer(opts: { smtpUrl?: string; dataDir: string; from?: string; log?: Logger }): Mailer {
  const from = opts.from ?? "Links <no-reply@localhost>";
  if (opts.smtpUrl) {
    const transport = nodemailer.createTransport(opts.smtpUrl);
    return {
      async send(mail) {
        await transport.sendMail({ from, ...mail });
        opts.log?.info({ to: mail.to, subject: mail.subject }, "mail sent");
      },
      close: () => transport.close(),
    };
  }
  const dir = path.join(opts.dataDir, "outbox");
  return {
    async send(mail) {
      await mkdir(dir, { recursive: true });
      const createdAt = Date.now();
      const file = path.join(dir, `${createdAt}-${randomString(6, BASE36)}.json`);
      await writeFile(file, JSON.stringify({ ...mail, created_at: createdAt }, null, 2));
      opts.log?.info({ to: mail.to, subject: mail.subject, file }, "mail written to outbox");
    },
    close() {},
  };
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A workspace invitation (extensions §1): `acceptUrl` (`${APP_URL}/invites/{token}`) is the only
 * URL containing `/invites/` in the mail, and the text holds no 6-digit number (a sign-in code's mark).
 */
export function inviteMail(to: string, opts: { workspace: string; invitedBy: string | null; role: "owner" | "member"; acceptUrl: string }): Mail {
  const who = opts.invitedBy ?? "Someone";
  const as = opts.role === "owner" ? "an owner" : "a member";
  // One line: names are the users' own text.
  const subject = `${who} invited you to ${opts.workspace}`.replace(/[\u0000-\u001f\u007f]+/g, " ");
  const text =
    `${who} invited you to join the workspace “${opts.workspace}” on Links as ${as}.\n\n` +
    `Accept the invitation: ${opts.acceptUrl}\n\n` +
    `Sign in with this address (${to}) to accept. The link works once and for seven days. If you did not expect this, ignore this e-mail.\n`;
  const html =
    `<p>${escapeHtml(who)} invited you to join the workspace “${escapeHtml(opts.workspace)}” on Links as ${as}.</p>` +
    `<p><a href="${escapeHtml(opts.acceptUrl)}">Accept the invitation</a></p>` +
    `<p>Sign in with this address (${escapeHtml(to)}) to accept. The link works once and for seven days. If you did not expect this, ignore this e-mail.</p>`;
  return { to, subject, text, html };
}
