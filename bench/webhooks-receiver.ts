// The receiving end of the webhooks bench, in a process of its own (another machine, in practice):
// answers every POST 200 at once and counts what arrived. Asked by IPC for its counts or to reset.
import http from "node:http";
import type { AddressInfo } from "node:net";

let received = 0;
const ids = new Set<string>();
const clicks = new Set<string>();
/** Only the clicks of this link are counted (the bench's crash section sets it). */
let linkId = "";

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    received++;
    ids.add(String(req.headers["webhook-id"]));
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { type: string; data?: { link_id?: string; click?: { ts?: string } } };
      if (body.type === "link.clicked" && body.data?.click?.ts && (!linkId || body.data.link_id === linkId)) clicks.add(body.data.click.ts);
    } catch {
      // counted as received all the same
    }
    res.writeHead(200, { "content-length": "2" }).end("ok");
  });
});

process.on("message", (m: string) => {
  if (m.startsWith("link:")) linkId = m.slice(5);
  if (m === "reset" || m.startsWith("link:")) {
    received = 0;
    ids.clear();
    clicks.clear();
  }
  process.send?.({ received, ids: ids.size, clicks: clicks.size });
});

server.listen(0, "127.0.0.1", () => process.send?.({ port: (server.address() as AddressInfo).port }));
