// The container's HEALTHCHECK: GET /_/ready (or the path given) on the port the redirect origin listens
// on, the port of REDIRECT_URL, with its Host. Exit 0 on a 2xx, 1 otherwise, within 4 s.
import http from "node:http";

const url = new URL(process.env.REDIRECT_URL || "http://localhost:3001");
const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
const req = http.get({ host: "127.0.0.1", port, path: process.argv[2] || "/_/ready", headers: { host: url.host }, timeout: 4000 }, (res) => {
  res.resume();
  process.exit(res.statusCode >= 200 && res.statusCode < 300 ? 0 : 1);
});
req.on("timeout", () => req.destroy(new Error("timeout")));
req.on("error", (e) => {
  console.error(`health check: ${e.message}`);
  process.exit(1);
});
