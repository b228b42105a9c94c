import { SMTPServer } from "smtp-server";

export type CapturedMail = { from: string | false; to: string[]; raw: string };

/** An SMTP relay on 127.0.0.1:`port` that keeps every message it is sent: the envelope's sender and recipients, and the raw text. */
export async function smtpCapture(port: number) {
  const received: CapturedMail[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, done) {
      let raw = "";
      stream.on("data", (c: Buffer) => (raw += c.toString("utf8")));
      stream.on("end", () => {
        const { mailFrom, rcptTo } = session.envelope;
        received.push({ from: mailFrom && mailFrom.address, to: rcptTo.map((r) => r.address), raw });
        done();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(port, "127.0.0.1", resolve));
  return { received, close: () => new Promise<void>((resolve) => smtp.close(() => resolve())) };
}
