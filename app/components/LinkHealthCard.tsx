import { Form } from "@remix-run/react";
import type { HealthDto } from "../../server/routers/health/health.schema";
import { formatDateTime } from "../lib/format";
import type { FormError } from "../lib/messages";
import { FormAlert } from "./ui";

/** The form field that tells the link page's action to check the destinations now. */
export const CHECK_HEALTH_INTENT = "check-health";

const BROKEN_TITLE = "A destination of this link failed two checks in a row";

/** The red "Broken" badge of a link whose destination failed two checks in a row (list rows, link page). */
export function BrokenBadge() {
  return (
    <span className="badge !bg-red-100 !text-red-800 dark:!bg-red-950 dark:!text-red-200" title={BROKEN_TITLE} data-testid="broken-badge">
      Broken
    </span>
  );
}

const STATUS_WORDS: Record<HealthDto["status"], string> = {
  ok: "Every destination answered.",
  broken: "A destination failed two checks in a row: visitors may land on an error page.",
  unknown: "Not known yet: destinations are checked about once a day.",
};

const DESTINATION_WORDS = { ok: "works", failed: "failed", unknown: "not checked" } as const;

/**
 * The link page's destination health: the last check's result per destination and a "Check now"
 * button (a plain form post, so it works without JavaScript).
 */
export function LinkHealthCard({ health, error, canCheck }: { health: HealthDto | null; error?: FormError | null; canCheck: boolean }) {
  return (
    <section className="card space-y-3" aria-labelledby="link-health-title" data-testid="link-health">
      <h2 id="link-health-title" className="flex items-center gap-2 font-semibold">
        Destination health {health?.status === "broken" ? <BrokenBadge /> : null}
      </h2>
      {health ? (
        <>
          <p className="text-sm text-slate-700 dark:text-slate-300" data-testid="link-health-status">
            {STATUS_WORDS[health.status]}
          </p>
          {health.checked_at ? (
            <p className="text-xs text-slate-600 dark:text-slate-400">
              Last checked {formatDateTime(health.checked_at)}
              {health.error ? <> · {health.error}</> : null}
            </p>
          ) : null}
          {health.destinations.length ? (
            <ul className="space-y-1 text-xs" aria-label="Destinations checked">
              {health.destinations.map((d) => (
                <li key={d.url} className="break-all">
                  <span className={d.status === "failed" ? "font-semibold text-red-800 dark:text-red-300" : ""}>{DESTINATION_WORDS[d.status]}</span>
                  {d.http_status ? ` (${d.http_status})` : ""}: {d.url}
                </li>
              ))}
            </ul>
          ) : null}
        </>
      ) : (
        <p className="text-sm text-slate-700 dark:text-slate-300">The health of this link could not be read just now.</p>
      )}
      <FormAlert error={error} />
      {canCheck ? (
        <Form method="post">
          <button type="submit" name="intent" value={CHECK_HEALTH_INTENT} className="btn-secondary">
            Check now
          </button>
        </Form>
      ) : null}
    </section>
  );
}
