import { existsSync } from "node:fs";
import nodeHttp from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer } from "../test/harness";
import { signIn } from "../test/security/servers";

/**
 * Every body that reaches the Remix dashboard is bounded (64 KiB; the avatar upload
 * 2 MB + 64 KiB), and bodies the form routes cannot read answer 415/400, never 500.
 */
type Raw = { status: number; body: string; sent: number };

/** A POST through node:http: a declared Content-Length, or chunks streamed until the server answers. */
function post(url: string, opts: { headers?: Record<string, string>; body?: Buffer | string; stream?: { chunk: number; total: number } }): Promise<Raw> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = nodeHttp.request(url, { method: "POST", headers: opts.headers }, (res) => {
      answered = true;
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, body, sent }));
      res.on("error", reject);
    });
    // The server may close the connection after answering while the body is still being sent.
    req.on("error", (e) => (answered ? undefined : reject(e)));
    if (opts.stream) {
      const { chunk, total } = opts.stream;
      const block = Buffer.alloc(chunk, "a");
      const pump = () => {
        while (!answered && !req.destroyed && sent < total) {
          sent += chunk;
          if (!req.write(block)) return void req.once("drain", pump);
        }
        if (!answered && !req.destroyed) req.end();
      };
      pump();
    } else {
      if (opts.body !== undefined) req.write(opts.body);
      // A declared length larger than what is sent: the answer must not wait for the rest.
      if (!opts.headers?.["content-length"] || Number(opts.headers["content-length"]) === Buffer.byteLength(opts.body ?? "")) req.end();
    }
  });
}

function multipart(fields: Record<string, string | Buffer>, boundary = "----b0undary") {
  const parts = Object.entries(fields).map(([name, v]) =>
    Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${Buffer.isBuffer(v) ? `; filename="${name}.png"\r\nContent-Type: image/png` : ""}\r\n\r\n`,
      ),
      Buffer.isBuffer(v) ? v : Buffer.from(v),
      Buffer.from("\r\n"),
    ]),
  );
  return { body: Buffer.concat([...parts, Buffer.from(`--${boundary}--\r\n`)]), type: `multipart/form-data; boundary=${boundary}` };
}

describe.skipIf(!existsSync("build/index.js"))("dashboard form bodies", () => {
  let t: TestServer;
  const FORM = "application/x-www-form-urlencoded";
  beforeAll(async () => void (t = await createTestServer({}, { remix: true })));
  afterAll(() => t?.close());

  it("a form body declared over 64 KiB answers 413 PAYLOAD_TOO_LARGE without being read", async () => {
    for (const path of ["/report", "/login", "/links/new", "/"]) {
      // Only 6 of the declared bytes are ever sent: any answer at all proves the body was not awaited.
      // A server that waited would never answer, and the suite's own test timeout reports it; no
      // shorter clock here, since a busy machine may take seconds to answer.
      const r = await post(`${t.appUrl}${path}`, { headers: { "content-type": FORM, "content-length": String(300 * 1024 * 1024) }, body: "url=x&" });
      expect(r.status, path).toBe(413);
      expect(JSON.parse(r.body), path).toEqual({ error: "PAYLOAD_TOO_LARGE" });
    }
  });

  it("a streamed (chunked) form body is cut off with 413 once it passes 64 KiB", async () => {
    for (const path of ["/report", "/login"]) {
      const total = 32 * 1024 * 1024;
      const r = await post(`${t.appUrl}${path}`, { headers: { "content-type": FORM, "transfer-encoding": "chunked" }, stream: { chunk: 16 * 1024, total } });
      expect(r.status, path).toBe(413);
      expect(JSON.parse(r.body)).toEqual({ error: "PAYLOAD_TOO_LARGE" });
      expect(r.sent, `${path}: the answer came only after the whole body`).toBeLessThan(total);
    }
  });

  it("a form of exactly 64 KiB is still read", async () => {
    const body = `url=x&reason=spam&detail=${"a".repeat(64 * 1024 - "url=x&reason=spam&detail=".length)}`;
    const r = await post(`${t.appUrl}/report`, { headers: { "content-type": FORM, "content-length": String(Buffer.byteLength(body)) }, body });
    expect(r.status).toBe(200);
    expect(r.body).toContain("at most 1000"); // the form's own answer: detail is too long
  });

  it("non-form bodies to the form routes answer 415 UNSUPPORTED_MEDIA_TYPE, not 500", async () => {
    for (const path of ["/report", "/login"]) {
      for (const [type, body] of [
        ["application/json", JSON.stringify({ url: "x", reason: "spam" })],
        ["text/plain", "url=x"],
        ["application/xml", "<a/>"],
        ["application/octet-stream", "\u0000\u0001"],
      ]) {
        const r = await http(`${t.appUrl}${path}`, { method: "POST", headers: { "content-type": type }, body });
        expect(r.status, `${path} ${type}`).toBe(415);
        expect(r.json, `${path} ${type}`).toEqual({ error: "UNSUPPORTED_MEDIA_TYPE" });
      }
      // A body with no Content-Type at all.
      const none = await post(`${t.appUrl}${path}`, { headers: { "content-length": "5" }, body: "url=x" });
      expect(none.status, `${path} without a type`).toBe(415);
    }
  });

  it("a malformed multipart body answers 400 VALIDATION_FAILED, not 500", async () => {
    for (const path of ["/report", "/login"]) {
      for (const [type, body] of [
        ["multipart/form-data", '--x\r\nContent-Disposition: form-data; name="url"\r\n\r\nx\r\n--x--\r\n'],
        ["multipart/form-data; boundary=zzz", "this is not multipart"],
        ["multipart/form-data; boundary=x", "--x\r\nno headers here"],
      ]) {
        const r = await http(`${t.appUrl}${path}`, { method: "POST", headers: { "content-type": type }, body });
        expect(r.status, `${path} ${type}`).toBe(400);
        expect(r.json, `${path} ${type}`).toMatchObject({ error: "VALIDATION_FAILED", fields: { body: [expect.any(String)] } });
      }
    }
  });

  it("well-formed forms still work: urlencoded and multipart reports, a bodiless sign-out", async () => {
    const link = await http(`${t.api}/links`, { method: "POST", json: { url: "https://example.com/form-bodies" } });
    expect(link.status).toBe(201);
    const form = new URLSearchParams({ url: link.json.short_url, reason: "spam" });
    const ok = await http(`${t.appUrl}/report`, { method: "POST", headers: { "content-type": FORM }, body: form.toString() });
    expect(ok.status).toBe(200);
    expect(ok.text).toContain("your report was received");
    const m = multipart({ url: link.json.short_url, reason: "phishing" });
    const okMultipart = await http(`${t.appUrl}/report`, { method: "POST", headers: { "content-type": m.type }, body: m.body });
    expect(okMultipart.status).toBe(200);
    expect(okMultipart.text).toContain("your report was received");
    const out = await http(`${t.appUrl}/logout`, { method: "POST" });
    expect(out.status).toBe(302);
  });

  it("the avatar upload has its own limit (2 MB image + 64 KiB of form), other routes keep 64 KiB; past it, the avatar form says so on its page", async () => {
    const { cookie } = await signIn(t, "avatar-limit@example.com");
    const big = multipart({ avatar: Buffer.alloc(1024 * 1024, 1) });
    const settings = await http(`${t.appUrl}/settings?index`, { method: "POST", headers: { ...cookie, "content-type": big.type }, body: big.body });
    expect(settings.status).toBe(200); // read whole: the route itself answers (not an image)
    expect(settings.text).not.toContain("PAYLOAD_TOO_LARGE");
    const report = await http(`${t.appUrl}/report`, { method: "POST", headers: { "content-type": big.type }, body: big.body });
    expect(report.status).toBe(413);
    const tooBig = multipart({ avatar: Buffer.alloc(2 * 1024 * 1024 + 64 * 1024, 1) });
    const over = await post(`${t.appUrl}/settings?index`, {
      headers: { ...cookie, "content-type": tooBig.type, "content-length": String(tooBig.body.length) },
      body: tooBig.body,
    });
    // Not read, and not a bare 413 the page cannot show: the form's own words, as for any image over 2 MB.
    expect(over.status).toBe(200);
    expect(over.body).toContain("must be at most 2 MB");
  });
});
