import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCOPES } from "../../domain/scopes";
import { signedInDashboard } from "../../test/dashboard-session";
import { http, type TestServer } from "../../test/harness";

describe.skipIf(!existsSync("build/index.js"))("tokens page (Remix, no JavaScript)", () => {
  let t: TestServer;
  let cookie: Record<string, string>;
  beforeAll(async () => void ({ t, formHeaders: cookie } = await signedInDashboard({ plan: "pro" })));
  afterAll(() => t?.close());

  const submit = (fields: [string, string][]) =>
    http(`${t.appUrl}/settings/tokens`, {
      method: "POST",
      headers: { ...cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams([["intent", "create"], ...fields]).toString(),
    });
  const scopesOf = async (name: string) => {
    const { tokens } = await t.caller({ cookie: cookie.cookie }).token.list();
    return tokens.find((x) => x.name === name)?.scopes;
  };

  it("the tokens page creates read-only, custom and full-access tokens and shows each token's scopes", async () => {
    const page = await http(`${t.appUrl}/settings/tokens`, { headers: { cookie: cookie.cookie } });
    for (const scope of SCOPES) expect(page.text).toContain(`value="${scope}"`);
    expect(
      (
        await submit([
          ["name", "ro"],
          ["access", "read"],
        ])
      ).status,
    ).toBe(200);
    expect(await scopesOf("ro")).toEqual(SCOPES.filter((s) => s.endsWith(":read")));
    expect(
      (
        await submit([
          ["name", "custom"],
          ["access", "custom"],
          ["scopes", "links:write"],
          ["scopes", "analytics:read"],
        ])
      ).status,
    ).toBe(200);
    expect(await scopesOf("custom")).toEqual(["links:write", "analytics:read"]);
    await submit([
      ["name", "all"],
      ["access", "full"],
    ]);
    expect(await scopesOf("all")).toEqual([...SCOPES]);
    const list = await http(`${t.appUrl}/settings/tokens`, { headers: { cookie: cookie.cookie } });
    const cells = [...list.text.matchAll(/data-testid="token-scopes">([^<]*)</g)].map((m) => m[1]);
    expect(cells).toEqual(expect.arrayContaining(["read only", "links:write, analytics:read", "full access"]));
  });

  it("an unknown scope from the form is refused with a message naming scopes", async () => {
    const r = await submit([
      ["name", "bad"],
      ["access", "custom"],
      ["scopes", "links:admin"],
    ]);
    expect(r.text).toContain('id="scopes-err"');
    expect(await scopesOf("bad")).toBeUndefined();
  });

  it("'only the scopes checked' with none checked is refused next to the scopes, and makes no token", async () => {
    const r = await submit([
      ["name", "nothing"],
      ["access", "custom"],
    ]);
    expect(r.text).toContain("check at least one scope");
    expect(await scopesOf("nothing")).toBeUndefined();
  });
});
