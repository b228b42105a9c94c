// The yardstick: a bare node:http server answering 301 from a Map of the same slugs.
import http from "node:http";

const [port, file] = [Number(process.argv[2]), process.argv[3]];
const { readFileSync } = await import("node:fs");
const map = new Map<string, string>(JSON.parse(readFileSync(file, "utf8")));
http
  .createServer((req, res) => {
    const slug = (req.url ?? "/").slice(1).split("?")[0].toLowerCase();
    const url = map.get(slug);
    if (url) res.writeHead(301, { Location: url, "Cache-Control": "no-store", "Content-Length": "0" }).end();
    else res.writeHead(404, { "Content-Length": "0" }).end();
  })
  .listen(port, "127.0.0.1", () => process.send?.("ready"));
