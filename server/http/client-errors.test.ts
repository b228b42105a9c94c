// Requests node:http refuses before any handler sees them still get the service's error body.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, type TestServer } from "../test/harness";

let t: TestServer;
beforeAll(async () => {
  t = await createTestServer();
});
afterAll(() => t?.close());

/** Sends `raw` on a new connection to the API's port and reads until the server closes it. */
function rawRequest(raw: string): Promise<{ status: number; headers: string; body: string }> {
  const u = new URL(t.api);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(u.port), u.hostname, () => socket.write(raw));
    let data = "";
    socket.setEncoding("utf8");
    socket.on("data", (d) => (data += d));
    socket.on("error", reject);
    socket.on("close", () => {
      const [head, body = ""] = data.split("\r\n\r\n");
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), headers: head, body });
    });
  });
}

describe("requests refused before the service sees them", () => {
  it("a request line and headers over 16 KiB answer 431 with a JSON error naming headers", async () => {
    const r = await rawRequest(`GET /api/links?q=${"a".repeat(20_000)} HTTP/1.1\r\nHost: ${new URL(t.api).host}\r\n\r\n`);
    expect(r.status).toBe(431);
    expect(r.headers).toMatch(/content-type: application\/json/i);
    expect(JSON.parse(r.body)).toEqual({ error: "VALIDATION_FAILED", fields: { headers: [expect.any(String)] } });
  });

  it("a malformed request answers 400 VALIDATION_FAILED with fields", async () => {
    const r = await rawRequest("GARBAGE\r\n\r\n");
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toEqual({ error: "VALIDATION_FAILED", fields: { request: [expect.any(String)] } });
  });
});
