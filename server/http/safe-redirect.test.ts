import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { safeRedirect } from "../../app/lib/session.server";
import { http } from "../test/harness";
import { signIn, startLoggedServer, type LoggedServer } from "../test/security/servers";

/** The page after sign-in is a path of the dashboard's own origin, never another site. */
describe("sign-in redirects only to same-origin paths", () => {
  // Browsers drop tabs and newlines anywhere in a URL and read "\" as "/": each of these is //evil.com to them.
  const offsite = [
    "//evil.com",
    "/\\evil.com",
    "\\\\evil.com",
    "\\/evil.com",
    "/\t/evil.com",
    "/\n/evil.com",
    "/\r\n/evil.com",
    "\t//evil.com",
    "/\t\\evil.com",
    " //evil.com",
    "\u0000//evil.com",
    "/\u0000/evil.com",
    "/./\t/evil.com",
    "/.//evil.com",
    "/..//evil.com",
    "/a/..//evil.com",
    "/%2e//evil.com",
    "https://evil.com",
    "https:evil.com",
    "http:/evil.com",
    "javascript:alert(1)",
    "JaVaScRiPt:alert(1)",
    "\tjavascript:alert(1)",
    "data:text/html,x",
    "evil.com",
    "",
    "links",
    "///evil.com",
    "/\\/evil.com",
    "/\u000b/evil.com",
    "/\u007f/evil.com",
  ];
  for (const to of offsite) {
    it(`rejects ${JSON.stringify(to)}`, () => {
      expect(safeRedirect(to)).toBe("/links");
    });
  }

  it("rejects non-strings (a file part, null, undefined)", () => {
    expect(safeRedirect(null)).toBe("/links");
    expect(safeRedirect(undefined)).toBe("/links");
    expect(safeRedirect(new File(["x"], "x") as unknown as string)).toBe("/links");
  });

  const local: [string, string][] = [
    ["/links", "/links"],
    ["/links/abc?tab=1#top", "/links/abc?tab=1#top"],
    ["/analytics?link_id=k3v9x0qa&from=0", "/analytics?link_id=k3v9x0qa&from=0"],
    ["/settings/tokens", "/settings/tokens"],
    ["/", "/"],
  ];
  for (const [to, expected] of local) {
    it(`keeps ${JSON.stringify(to)}`, () => {
      expect(safeRedirect(to)).toBe(expected);
    });
  }

  it("every answer, read by a browser against the app origin, stays on that origin", () => {
    for (const to of [...offsite, ...local.map(([t]) => t), "/a\tb", "/%09/evil.com", "/x/../\\evil.com"]) {
      const out = safeRedirect(to);
      expect(out.startsWith("/") && !out.startsWith("//") && !/[\\\u0000-\u001f\u007f]/.test(out), JSON.stringify(to)).toBe(true);
      expect(new URL(out, "https://app.example").origin, JSON.stringify(to)).toBe("https://app.example");
    }
  });
});

describe.skipIf(!existsSync("build/index.js"))("sign-in redirect over HTTP", () => {
  let s: LoggedServer;
  beforeAll(async () => void (s = await startLoggedServer({ remix: true })));
  afterAll(() => s?.close());

  it("a signed-in visit to /login?redirectTo=/%09/evil.com goes to /links", async () => {
    const { cookie } = await signIn(s, "redirect@example.com");
    const evil = await http(`${s.appUrl}/login?redirectTo=/%09/evil.com`, { headers: cookie });
    expect(evil.status).toBe(302);
    expect(evil.headers.get("location")).toBe("/links");
    const fine = await http(`${s.appUrl}/login?redirectTo=${encodeURIComponent("/analytics?from=0")}`, { headers: cookie });
    expect(fine.status).toBe(302);
    expect(fine.headers.get("location")).toBe("/analytics?from=0");
  });
});
