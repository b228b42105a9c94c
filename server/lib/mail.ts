import type { Role } from "../domain/types";
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
        opts.log?.info({ subject: mail.subject }, "mail sent");
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
      opts.log?.info({ subject: mail.subject, file }, "mail written to outbox"); // no address: logs hold no personal data
    },
    close() {},
  };
}

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A name someone chose (a workspace's, an inviter's), made inert for a mail: one line, and nothing a
 * mail client would turn into a link: dots (of any script), `@` and `://` are bracketed, the way
 * addresses are quoted in security notices (`evil[.]example`). The mail is ours; the name must not
 * turn it into someone else's message with a working link in it.
 */
export function inertName(name: string): string {
  return name
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ")
    .replace(/:\/\//g, "[://]")
    .replace(/[.\u2024\u3002\uff0e\uff61]/g, "[.]")
    .replace(/[@\uff20]/g, "[at]")
    .trim();
}

/**
 * A workspace invitation: `acceptUrl` (`${APP_URL}/invites/{token}`) is the only
 * URL containing `/invites/` in the mail, and the text holds no 6-digit number (a sign-in code's mark).
 * The subject is fixed: no text chosen by the inviter reaches it. In the body the names are quoted,
 * made inert (`inertName`) and, in the HTML part, escaped.
 */
export function inviteMail(to: string, opts: { workspace: string; invitedBy: string | null; role: Role; acceptUrl: string }): Mail {
  const who = opts.invitedBy === null ? "Someone" : `“${inertName(opts.invitedBy)}”`;
  const workspace = inertName(opts.workspace);
  const as = opts.role === "owner" ? "an owner" : opts.role === "viewer" ? "a viewer (who can read, not change)" : "a member";
  const subject = "You are invited to a workspace on Links";
  const text =
    `${who} invited you to join the workspace “${workspace}” on Links as ${as}.\n\n` +
    `Accept the invitation: ${opts.acceptUrl}\n\n` +
    `Sign in with this address (${to}) to accept. The link works once and for seven days. If you did not expect this, ignore this e-mail.\n`;
  const html =
    `<p>${escapeHtml(who)} invited you to join the workspace “${escapeHtml(workspace)}” on Links as ${as}.</p>` +
    `<p><a href="${escapeHtml(opts.acceptUrl)}">Accept the invitation</a></p>` +
    `<p>Sign in with this address (${escapeHtml(to)}) to accept. The link works once and for seven days. If you did not expect this, ignore this e-mail.</p>`;
  return { to, subject, text, html };
}

/**
 * To a workspace's owners when the service turned a webhook endpoint off (every delivery failed for
 * 3 days). The endpoint's URL was typed by any member, so it is made inert like a chosen name.
 */
export function webhookDisabledMail(to: string, opts: { workspace: string; url: string; reason: string; pageUrl: string }): Mail {
  const endpoint = inertName(opts.url);
  const workspace = inertName(opts.workspace);
  const subject = "A webhook endpoint was turned off";
  const text =
    `The webhook endpoint ${endpoint} of the workspace “${workspace}” was turned off: ${opts.reason}.\n\n` +
    `No more events are sent to it. Fix the endpoint, then turn it on again: ${opts.pageUrl}\n`;
  const html =
    `<p>The webhook endpoint ${escapeHtml(endpoint)} of the workspace “${escapeHtml(workspace)}” was turned off: ${escapeHtml(opts.reason)}.</p>` +
    `<p>No more events are sent to it. Fix the endpoint, then <a href="${escapeHtml(opts.pageUrl)}">turn it on again</a>.</p>`;
  return { to, subject, text, html };
}
