// proxy-addr (an express dependency) ships no types; the fast path calls it like express's `req.ip`,
// and the configuration checks TRUST_PROXY with its compile, as express would read it.
declare module "proxy-addr" {
  import type { IncomingMessage } from "node:http";
  function proxyaddr(req: IncomingMessage, trust: (addr: string, i: number) => boolean): string;
  namespace proxyaddr {
    /** The trust function of addresses, subnets and the names loopback, linklocal, uniquelocal; throws on any other entry. */
    function compile(list: string[]): (addr: string, i: number) => boolean;
  }
  export default proxyaddr;
}
