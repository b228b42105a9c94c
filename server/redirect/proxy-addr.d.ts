// proxy-addr (an express dependency) ships no types; the fast path calls it like express's `req.ip`.
declare module "proxy-addr" {
  import type { IncomingMessage } from "node:http";
  function proxyaddr(req: IncomingMessage, trust: (addr: string, i: number) => boolean): string;
  export default proxyaddr;
}
