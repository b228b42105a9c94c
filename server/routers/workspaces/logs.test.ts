import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "../../lib/crypto";
import { startLoggedServer, type LoggedServer } from "../../test/security/servers";
import { caller, invitationToken, person } from "./teams.test-helper";

/** An invitation's token is a secret like a sign-in code: no log line carries it or its hash. */
let s: LoggedServer;
beforeAll(async () => void (s = await startLoggedServer()));
afterAll(() => s?.close());

describe("invitation tokens stay out of the logs", () => {
  it("inviting, opening the mailed link, a wrong address's try and accepting log neither the token nor its SHA-256", async () => {
    const call = caller(() => s.api);
    const [owner, invited, other] = [await person(s), await person(s), await person(s)];
    const ws = (await call("POST", "/workspaces", owner.cookie, { name: "Logged" })).json.id;
    expect((await call("POST", `/workspaces/${ws}/invites`, owner.cookie, { email: invited.email, role: "member" })).status).toBe(201);
    const token = invitationToken(s.app, invited.email);
    await fetch(`${s.appUrl}/invites/${token}`); // the mailed link (the dashboard is off here: any answer is logged)
    expect((await call("POST", "/invites/accept", other.cookie, { token })).status).toBe(403);
    expect((await call("POST", "/invites/accept", invited.cookie, { token })).status).toBe(200);
    const all = s.lines.join("\n");
    expect(all).toContain("/invites/…");
    expect(all).not.toContain(token);
    expect(all).not.toContain(sha256(token));
  });
});
