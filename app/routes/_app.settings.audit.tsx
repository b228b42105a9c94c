import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useLoaderData } from "@remix-run/react";
import { FieldErrors, FormAlert, fieldErrors } from "../components/ui";
import { attempt, load } from "../lib/errors.server";
import { formatDateTime } from "../lib/format";
import { requireActor } from "../lib/session.server";

export const meta: MetaFunction = () => [{ title: "Audit log · Links" }];

/** The filters, by their GET /audit names: kept in the address so a filtered page can be shared and paged. */
const FILTERS = ["actor", "action", "target_type", "target_id"] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;

/** The address of this page with `filters`, and `cursor` when given. */
function pageUrl(filters: Filters, cursor?: string): string {
  const q = new URLSearchParams();
  for (const k of FILTERS) if (filters[k]) q.set(k, filters[k]!);
  if (cursor) q.set("cursor", cursor);
  const s = q.toString();
  return s ? `/settings/audit?${s}` : "/settings/audit";
}

/**
 * Owners only, like GET /audit: anyone else sees why instead of the list. A filter the server refuses
 * keeps the page: the field is marked and no events show.
 */
export async function loader({ context, request }: LoaderFunctionArgs) {
  const actor = await requireActor(context, request);
  if (actor.role !== "owner") return { owner: false as const };
  const params = new URL(request.url).searchParams;
  const filters: Filters = {};
  for (const k of FILTERS) {
    const v = params.get(k)?.trim();
    if (v) filters[k] = v;
  }
  const cursor = params.get("cursor") ?? undefined;
  const choices = await load(request, () => context.caller.audit.filterChoices());
  const page = await attempt(request, () => context.caller.audit.list({ limit: "50", ...filters, ...(cursor ? { cursor } : {}) }));
  if (!page.ok) return { owner: true as const, events: [], next_cursor: null, first: !cursor, filters, choices, problem: page.error };
  return { owner: true as const, ...page.value, first: !cursor, filters, choices, problem: null };
}

/** What an action means in plain words: `link.created` is "created a link". */
function described(action: string, type: string): string {
  const [, verb = action] = action.split(".");
  const noun = type === "item" ? "linktree item" : type === "token" ? "API token" : type === "invite" ? "invitation" : type;
  // "an API token", "an invitation", "a link": the article goes by the noun's first sound.
  const a = /^(API|[aeiou])/.test(noun) ? `an ${noun}` : `a ${noun}`;
  const words: Record<string, string> = {
    created: `created ${a}`,
    updated: `changed ${a}`,
    deleted: type === "token" ? `revoked ${a}` : `deleted ${a}`,
    // Written by earlier releases, one event per bulk call, and kept as long as any event.
    bulk_created: "created links in bulk",
    bulk_updated: "changed several links",
    bulk_deleted: "deleted several links",
    imported: "imported links",
    invited: "invited someone",
    joined: "joined",
    left: "left",
    removed: "removed a member",
    revoked: `revoked ${a}`,
    verified: `verified ${a}`,
  };
  return words[verb] ?? action;
}

function changesText(action: string, changes: string[] | Record<string, number> | null): string {
  if (!changes) return "";
  if (Array.isArray(changes)) return changes.join(", ");
  // A bulk change counts, per field, the links it changed: "tags on 3 links".
  if (action.endsWith(".bulk_updated"))
    return Object.entries(changes)
      .map(([k, n]) => `${k} on ${n} ${n === 1 ? "link" : "links"}`)
      .join(", ");
  return Object.entries(changes)
    .map(([k, n]) => `${n} ${k}`)
    .join(", ");
}

export default function AuditLog() {
  const data = useLoaderData<typeof loader>();
  return (
    <section className="card space-y-4" aria-labelledby="h-audit">
      <h2 id="h-audit" className="text-lg font-semibold">
        Audit log
      </h2>
      {!data.owner ? (
        <p className="text-sm text-slate-600 dark:text-slate-400">Only owners of this workspace can read its audit log.</p>
      ) : (
        <>
          <p className="text-sm text-slate-600 dark:text-slate-400">
            Who created, changed or deleted what in this workspace, newest first. Changes name the fields, never their values. Kept 400 days.
          </p>
          <AuditFilters />
          {data.events.length === 0 ? (
            <p className="text-sm">{Object.keys(data.filters).length ? "No events match these filters." : "Nothing has happened here yet."}</p>
          ) : (
            // Focusable and named: a keyboard user scrolls the table sideways on a narrow screen.
            // eslint-disable-next-line jsx-a11y/no-noninteractive-tabindex -- a scrolling region must take focus to be scrolled by keys
            <div className="overflow-x-auto" tabIndex={0} role="region" aria-label="Audit events">
              <table className="w-full text-left text-sm">
                <caption className="sr-only">Audit events</caption>
                <thead>
                  <tr className="border-b border-slate-200 dark:border-slate-800">
                    <th scope="col" className="py-2 pr-3">
                      When
                    </th>
                    <th scope="col" className="py-2 pr-3">
                      Who
                    </th>
                    <th scope="col" className="py-2 pr-3">
                      What
                    </th>
                    <th scope="col" className="py-2 pr-3">
                      Which
                    </th>
                    <th scope="col" className="py-2">
                      Fields
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {data.events.map((e) => (
                    <tr key={e.id} className="border-b border-slate-100 align-top dark:border-slate-900" data-testid="audit-row">
                      <td className="whitespace-nowrap py-2 pr-3">{formatDateTime(e.at)}</td>
                      <td className="py-2 pr-3">
                        {e.actor.email ?? "someone"}
                        {e.actor.token_id ? <span className="block text-xs text-slate-500">with API token {e.actor.token_id}</span> : null}
                      </td>
                      <td className="py-2 pr-3">{described(e.action, e.target.type)}</td>
                      <td className="py-2 pr-3 font-mono text-xs">{e.target.id ?? ""}</td>
                      <td className="py-2">{changesText(e.action, e.changes)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <nav aria-label="Audit log pages" className="flex gap-3">
            {!data.first ? (
              <Link to={pageUrl(data.filters)} className="btn-secondary">
                Newest
              </Link>
            ) : null}
            {data.next_cursor ? (
              <Link to={pageUrl(data.filters, data.next_cursor)} className="btn-secondary">
                Older events
              </Link>
            ) : null}
          </nav>
        </>
      )}
    </section>
  );
}

/** Person, action and object: a plain GET form, so it works without JavaScript and the address keeps it. */
function AuditFilters() {
  const data = useLoaderData<typeof loader>();
  if (!data.owner) return null;
  const { filters, choices, problem } = data;
  const errs = (name: string) => fieldErrors(problem, name);
  const marked = (name: string) => (errs(name).length ? { "aria-invalid": true, "aria-describedby": `${name}-err` } : {});
  // A value from the address that the choices do not hold (someone who never acted here) stays selectable.
  const withCurrent = (values: string[], current: string | undefined) => (current && !values.includes(current) ? [...values, current] : values);
  const people =
    filters.actor && !choices.people.some((p) => p.user_id === filters.actor) ? [...choices.people, { user_id: filters.actor, email: null }] : choices.people;
  return (
    <Form method="get" className="grid gap-3 sm:grid-cols-2 lg:grid-cols-[1fr_1fr_1fr_1fr_auto] lg:items-end" aria-label="Filter the audit log">
      <FormAlert error={problem} className="sm:col-span-2 lg:col-span-5" />
      <div>
        <label htmlFor="audit-actor" className="label">
          Person
        </label>
        <select id="audit-actor" name="actor" className="input" defaultValue={filters.actor ?? ""} {...marked("actor")}>
          <option value="">Anyone</option>
          {people.map((p) => (
            <option key={p.user_id} value={p.user_id}>
              {p.email ?? p.user_id}
            </option>
          ))}
        </select>
        <FieldErrors id="actor-err" errors={errs("actor")} />
      </div>
      <div>
        <label htmlFor="audit-action" className="label">
          Action
        </label>
        <select id="audit-action" name="action" className="input" defaultValue={filters.action ?? ""} {...marked("action")}>
          <option value="">Any action</option>
          {withCurrent(choices.actions, filters.action).map((a) => (
            <option key={a} value={a}>
              {a}
            </option>
          ))}
        </select>
        <FieldErrors id="action-err" errors={errs("action")} />
      </div>
      <div>
        <label htmlFor="audit-target-type" className="label">
          Object type
        </label>
        <select id="audit-target-type" name="target_type" className="input" defaultValue={filters.target_type ?? ""} {...marked("target_type")}>
          <option value="">Any type</option>
          {withCurrent(choices.target_types, filters.target_type).map((type) => (
            <option key={type} value={type}>
              {type}
            </option>
          ))}
        </select>
        <FieldErrors id="target_type-err" errors={errs("target_type")} />
      </div>
      <div>
        <label htmlFor="audit-target-id" className="label">
          Object id
        </label>
        <input id="audit-target-id" name="target_id" className="input font-mono" defaultValue={filters.target_id ?? ""} {...marked("target_id")} />
        <FieldErrors id="target_id-err" errors={errs("target_id")} />
      </div>
      <div className="flex gap-2">
        <button type="submit" className="btn-primary">
          Filter
        </button>
        {Object.keys(filters).length ? (
          <Link to="/settings/audit" className="btn-secondary">
            Clear
          </Link>
        ) : null}
      </div>
    </Form>
  );
}
