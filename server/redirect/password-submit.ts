import type { ServerResponse } from "node:http";
import type express from "express";
import { RateLimiterRes } from "rate-limiter-flexible";
import type { CachedLink } from "../core/lookup";
import type { AppServices } from "../core/services";
import { verifyPassword } from "../lib/crypto";
import { retryAfterSeconds, type LimitName } from "../lib/rate-limit";
import { passwordFormPage, type FormState } from "./password-form";
import { PASSWORD_FORM_HEADERS, sendHtml } from "./respond";
import type { Visits } from "./visit";
import type { RequestVisitor } from "./visitor";

type Limited = { limited: LimitName; res: RateLimiterRes };

/**
 * Reserves one try on the per-address and the per-link limit before the hash is checked; `giveBack`
 * returns them when the password was right, so only wrong tries count and parallel tries cannot
 * overshoot. Past either limit every try answers 429, the right password too: an answer that
 * differed would tell a guesser which guess was right.
 */
async function reserveTry(app: AppServices, ip: string, linkId: string): Promise<Limited | { giveBack(): Promise<unknown> }> {
  const reserved: [LimitName, string][] = [];
  const giveBack = () =>
    Promise.all(
      reserved.map(([n, k]) =>
        app.limits
          .get(n)
          .reward(k, 1)
          .catch(() => {}),
      ),
    );
  for (const [name, key] of [
    ["passwordPerAddress", ip],
    ["passwordPerLink", linkId],
  ] as const) {
    try {
      await app.limits.get(name).consume(key, 1);
      reserved.push([name, key]);
    } catch (e) {
      if (!(e instanceof RateLimiterRes)) throw e;
      await giveBack();
      return { limited: name, res: e };
    }
  }
  return { giveBack };
}

/** POST /{slug} with form field `password`: 302 and a counted click, or the form again with 401/429. */
export async function submitPassword(app: AppServices, visits: Visits, req: express.Request, res: ServerResponse, link: CachedLink, v: RequestVisitor) {
  const now = Date.now();
  const pass = async () => {
    const d = await visits.decideVisit(link, v, now, { passwordPassed: true });
    visits.answer(req, res, link, v, d);
  };
  // The password was removed while this visitor had the form open: let them through.
  // (An expired link still asks for the password first: decide gives its answer after.)
  if (!link.passwordHash) return pass();
  const form = (status: number, state: FormState, headers: Record<string, string> = {}, retryAfter?: number) => {
    sendHtml(res, status, passwordFormPage(link.slug, state, retryAfter, v.query), false, { ...PASSWORD_FORM_HEADERS, ...headers });
    visits.outcome(state === "limited" ? "password_limited" : "password_wrong");
  };
  const limitedForm = (name: LimitName, e: RateLimiterRes) => {
    app.metrics.rateLimited.inc({ limit: name });
    const wait = retryAfterSeconds(e);
    form(429, "limited", { "Retry-After": String(wait) }, wait);
  };
  const password = typeof req.body?.password === "string" ? req.body.password : "";
  if (!password) return form(401, "empty");
  const held = await reserveTry(app, v.ip, link.id);
  if ("limited" in held) return limitedForm(held.limited, held.res);
  // A wrong try stays on both counts.
  if (!(await verifyPassword(password, link.passwordHash))) return form(401, "wrong");
  await held.giveBack();
  await pass();
}
