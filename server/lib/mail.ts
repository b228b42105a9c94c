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
