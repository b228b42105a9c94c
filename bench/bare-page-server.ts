// The yardstick of the linktree page: a bare node:http server answering the same page (its bytes
// and headers, read from a JSON file) from memory on every GET.
import http from "node:http";
import { readFileSync } from "node:fs";

const [port, file] = [Number(process.argv[2]), process.argv[3]];
const { headers, body } = JSON.parse(readFileSync(file, "utf8")) as { headers: Record<string, string>; body: string };
const bytes = Buffer.from(body);
http
  .createServer((_req, res) => {
    res.writeHead(200, { ...headers, "Content-Length": String(bytes.length) }).end(bytes);
  })
  .listen(port, "127.0.0.1", () => process.send?.("ready"));
