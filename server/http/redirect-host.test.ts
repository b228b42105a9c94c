import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { composeRedirectHost } from "./redirect-host";

const req = (url: string) => ({ url, method: "GET", headers: {} }) as IncomingMessage;
const res = {} as ServerResponse;

describe("redirect host composition", () => {
  it("the fast path answers what it takes; Express gets only what it leaves", () => {
    const seen: string[] = [];
    const handler = composeRedirectHost({
      fastPath: (q) => (q.url!.startsWith("/_") ? false : (seen.push(`fast ${q.url}`), true)),
      routes: (q) => void seen.push(`routes ${q.url}`),
    });
    handler(req("/abc"), res);
    handler(req("/_/health"), res);
    expect(seen).toEqual(["fast /abc", "routes /_/health"]);
  });
});
