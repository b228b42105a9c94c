// The image flood of the bench's `og` section, in a process of its own: an attacker is another
// machine, and in the bench's own thread its answers would slow the redirect load generator instead
// of the server. Asked by IPC to run a round; answers the round's counts.
import { runLoad } from "./load";

const [port, host, connections] = [Number(process.argv[2]), process.argv[3], Number(process.argv[4])];
const ids = process.argv[5].split(",");
let next = 0;
const request = () => `GET /_/og/${ids[next++ % ids.length]}.png HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: bench-flood\r\nConnection: keep-alive\r\n\r\n`;

process.on("message", async (m: { seconds: number }) => {
  const r = await runLoad({ host: "127.0.0.1", port, connections, seconds: m.seconds, request });
  process.send?.({ requests: r.requests, seconds: r.seconds, statuses: [...r.statuses], errors: r.errors });
});
process.send?.("ready");
