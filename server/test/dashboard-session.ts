import { createTestServer, type TestUser } from "./harness";

/**
 * A test server with the dashboard (the Remix build) and a new user signed in to it: `cookie` is
 * their session's Cookie header value, as the browser sends it; `formHeaders`, the headers of a form
 * the browser posts (its Origin with the cookie).
 */
export async function signedInDashboard(user: { plan?: "free" | "pro" } = {}) {
  const t = await createTestServer({}, { remix: true });
  const u: TestUser = await t.user(user);
  const session = await t.app.lucia.createSession(u.id, { createdAt: Date.now() });
  const cookie = `app_session=${session.id}`;
  return { t, u, cookie, formHeaders: { cookie, origin: t.appUrl } };
}
