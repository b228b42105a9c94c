import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useSearchParams } from "@remix-run/react";
import { QrDialog } from "../components/QrDialog";
import { LinkForm } from "../components/LinkForm";
import { CHECK_HEALTH_INTENT, LinkHealthCard } from "../components/LinkHealthCard";
import { ConfirmDelete, CopyButton, FormAlert, PageHeader, Success } from "../components/ui";
import { attempt, fieldError, load, unconfirmed } from "../lib/errors.server";
import { updateInputFrom } from "../lib/link-form.server";
import { valuesFromLink, type LinkFormValues } from "../lib/link-form";
import { loadAcrossWorkspaces } from "../lib/locate.server";
import { requireActor } from "../lib/session.server";
import { formatDateTime, formatNumber } from "../lib/format";
import type { FormError } from "../lib/messages";
import type { UpdateLinkInput } from "../../server/routers/links/links.schema";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.link.slug ?? "Link"} · Links` }];

export async function loader({ context, request, params }: LoaderFunctionArgs) {
  await requireActor(context, request);
  const id = params.id ?? "";
  // A link of another of the user's workspaces opens there (switching, and saying so).
  const link = await loadAcrossWorkspaces(context, request, "link", id, () => context.caller.link.get({ id }));
  // The domain picker's choices: the workspace's verified branded domains.
  const { domains } = await load(request, () => context.caller.domain.list({}));
  // Destination health is extra: the page still opens when it cannot be read.
  const health = await context.caller.health.get({ id: link.id }).catch(() => null);
  // The A/B comparison: the breakdown procedure by variant (what GET /analytics/breakdown answers); extra, like health.
  const byVariant = link.variants
    ? await context.caller.analytics
        .breakdown({ by: "variant", link_id: link.id })
        .then((b) => b.rows)
        .catch(() => null)
    : null;
  return { link, domains: domains.filter((d) => d.verified).map((d) => d.name), health, byVariant };
}

const KEEP_INTENT = "keep_variant";

type ActionData =
  | { intent: "save"; error?: FormError; values?: LinkFormValues; saved?: boolean }
  | { intent: "delete"; error: FormError }
  | { intent: "health"; error?: FormError }
  | { intent: "keep"; error?: FormError; kept?: string };

export async function action({ context, request, params }: ActionFunctionArgs): Promise<ActionData> {
  await requireActor(context, request);
  const form = await request.formData();
  const id = params.id ?? "";
  if (form.get("intent") === "delete") {
    const refused = unconfirmed(form);
    if (refused) return { intent: "delete", error: refused };
    const r = await attempt(request, () => context.caller.link.delete({ id }));
    if (!r.ok) return { intent: "delete", error: r.error };
    throw redirect("/links?deleted=1");
  }
  if (form.get("intent") === CHECK_HEALTH_INTENT) {
    const r = await attempt(request, () => context.caller.health.check({ id }));
    return r.ok ? { intent: "health" } : { intent: "health", error: r.error };
  }
  const current = await load(request, () => context.caller.link.get({ id }));
  if (form.get("intent") === KEEP_INTENT) {
    const refused = unconfirmed(form);
    if (refused) return { intent: "keep", error: refused };
    const url = String(form.get("url") ?? "");
    // The page may be older than the link: keep only a URL that is still one of its variants.
    if (!current.variants?.some((v) => v.url === url)) {
      return { intent: "keep", error: fieldError({ variants: ["the variants changed since this page was loaded; look again"] }) };
    }
    // One edit: the kept URL becomes the destination and the test ends.
    const r = await attempt(request, () => context.caller.link.update({ id, url, variants: null }));
    return r.ok ? { intent: "keep", kept: url } : { intent: "keep", error: r.error };
  }
  const { values, input } = updateInputFrom(form, current);
  const r = await attempt(request, () => context.caller.link.update(input as UpdateLinkInput));
  if (!r.ok) return { intent: "save", error: r.error, values };
  return { intent: "save", saved: true };
}

export default function EditLink() {
  const { link, domains, health, byVariant } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const [params] = useSearchParams();
  const saveError = data?.intent === "save" ? data.error : null;
  const values = data?.intent === "save" && data.values ? data.values : valuesFromLink(link);
  return (
    <>
      <PageHeader title={link.slug} subtitle={<Link to="/links">← All links</Link>}>
        <Link to={`/analytics?link=${link.id}`} className="btn-secondary">
          Analytics
        </Link>
      </PageHeader>
      {params.get("switched") && !data ? (
        <div className="mb-4">
          <Success>Switched to workspace {params.get("switched")} to open this link.</Success>
        </div>
      ) : null}
      {params.get("created") && !data ? (
        <div className="mb-4">
          <Success>Link created.</Success>
        </div>
      ) : null}
      {data?.intent === "save" && data.saved ? (
        <div className="mb-4">
          <Success>Saved.</Success>
        </div>
      ) : null}
      {data?.intent === "keep" && data.kept ? (
        <div className="mb-4">
          <Success>Every visitor now goes to {data.kept}. The A/B test is over; its clicks stay in the analytics.</Success>
        </div>
      ) : null}
      {link.deleted_at ? <p className="alert-info mb-4">This link was deleted on {formatDateTime(link.deleted_at)}. Its analytics stay readable.</p> : null}
      {link.archived && !link.deleted_at ? (
        <p className="alert-info mb-4">
          This link is archived: visitors see &ldquo;not found&rdquo;, its slug stays yours and its analytics stay readable. Untick &ldquo;Archived&rdquo; below
          to put it back.
        </p>
      ) : null}
      <div className="grid gap-6 lg:grid-cols-[1fr_18rem]">
        <div className="min-w-0">
          {/* key: a successful save shows the stored values again */}
          {link.variants ? (
            <VariantComparison
              variants={link.variants}
              rows={byVariant}
              canKeep={!link.deleted_at}
              error={data?.intent === "keep" ? (data.error ?? null) : null}
            />
          ) : null}
          <LinkForm key={link.updated_at} link={link} values={values} error={saveError} submitLabel="Save changes" domains={domains} />
        </div>
        <aside className="space-y-4">
          <div className="card space-y-3">
            <h2 className="font-semibold">Short link</h2>
            <p className="break-all font-mono text-sm" data-testid="short-url">
              <a href={link.short_url}>{link.short_url}</a>
            </p>
            <CopyButton value={link.short_url} label="Copy short link" />
          </div>
          <LinkHealthCard health={health} error={data?.intent === "health" ? data.error : null} canCheck={!link.deleted_at} />
          <div className="card space-y-3">
            <h2 className="font-semibold">QR code</h2>
            {link.deleted_at ? (
              <p className="text-sm text-slate-700 dark:text-slate-300">A deleted link has no QR code: its slug is free.</p>
            ) : (
              <QrDialog linkId={link.id} shortUrl={link.short_url} />
            )}
          </div>
          {!link.deleted_at ? (
            <Form method="post" className="card">
              <FormAlert error={data?.intent === "delete" ? data.error : null} className="mb-3" />
              <ConfirmDelete label="Delete link" what={`the link ${link.slug}`}>
                <p className="text-sm text-slate-600 dark:text-slate-400">The slug is freed at once and the link stops redirecting. Click events are kept.</p>
              </ConfirmDelete>
            </Form>
          ) : null}
        </aside>
      </div>
    </>
  );
}

type VariantRow = { key: string | number | null; clicks: number; visitors: number };

/**
 * The A/B test's standing: clicks and unique visitors of each variant since the first click, and a
 * "Keep this one" per variant that ends the test (behind a confirmation box, so it works without JavaScript).
 */
function VariantComparison({
  variants,
  rows,
  canKeep,
  error,
}: {
  variants: { url: string; weight: number }[];
  rows: VariantRow[] | null;
  canKeep: boolean;
  error: FormError | null;
}) {
  const of = (i: number) => rows?.find((r) => r.key === i) ?? { clicks: 0, visitors: 0 };
  const total = variants.reduce((n, _, i) => n + of(i).clicks, 0);
  return (
    <section className="card mb-6 space-y-3" aria-labelledby="variants-title" data-testid="variant-comparison">
      <h2 id="variants-title" className="font-semibold">
        A/B test: how the variants compare
      </h2>
      <FormAlert error={error} />
      {rows === null ? <p className="text-sm text-slate-700 dark:text-slate-300">The variants&rsquo; clicks cannot be read right now.</p> : null}
      <div className="relative overflow-x-auto">
        <table className="table" aria-label="Variants">
          <thead>
            <tr>
              <th scope="col">Variant</th>
              <th scope="col" className="text-right">
                Share of visits
              </th>
              <th scope="col" className="text-right">
                Clicks
              </th>
              <th scope="col" className="text-right">
                Unique visitors
              </th>
              <th scope="col">
                <span className="sr-only">Keep</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {variants.map((v, i) => {
              const n = of(i);
              return (
                <tr key={v.url} data-testid="variant-row">
                  <td className="max-w-[18rem]">
                    <span className="font-semibold">Variant {i + 1}</span>
                    <span className="block truncate text-sm text-slate-600 dark:text-slate-400" title={v.url}>
                      {v.url}
                    </span>
                  </td>
                  <td className="text-right tabular-nums">
                    {v.weight}% planned
                    {total ? <span className="block text-xs text-slate-600 dark:text-slate-400">{Math.round((n.clicks / total) * 100)}% of clicks</span> : null}
                  </td>
                  <td className="text-right tabular-nums" data-testid="variant-clicks">
                    {formatNumber(n.clicks)}
                  </td>
                  <td className="text-right tabular-nums" data-testid="variant-visitors">
                    {formatNumber(n.visitors)}
                  </td>
                  <td>
                    {canKeep ? (
                      <details>
                        <summary className="btn-secondary cursor-pointer list-none !px-2 !py-1 text-xs" aria-label={`Keep this one: variant ${i + 1}`}>
                          Keep this one
                        </summary>
                        <Form method="post" className="mt-2 w-56 space-y-2">
                          <input type="hidden" name="url" value={v.url} />
                          <div className="flex items-start gap-2">
                            <input id={`keep-${i}`} type="checkbox" name="confirm" value="yes" required className="mt-1 h-4 w-4" />
                            <label htmlFor={`keep-${i}`} className="text-sm">
                              Yes, send every visitor to variant {i + 1} and remove the other variants.
                            </label>
                          </div>
                          <button type="submit" name="intent" value={KEEP_INTENT} className="btn-primary">
                            Keep variant {i + 1}
                          </button>
                        </Form>
                      </details>
                    ) : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <p className="text-xs text-slate-600 dark:text-slate-400">
        Since the first click. A visitor keeps the same variant for the day; unique visitors are counted per day and added up.
      </p>
    </section>
  );
}
