import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useSearchParams } from "@remix-run/react";
import { LinkForm } from "../components/LinkForm";
import { ConfirmDelete, CopyButton, FormAlert, PageHeader, Success } from "../components/ui";
import { attempt, fieldError, load } from "../lib/errors.server";
import { updateInputFrom } from "../lib/link-form.server";
import { valuesFromLink, type LinkFormValues } from "../lib/link-form";
import { loadAcrossWorkspaces } from "../lib/locate.server";
import { requireActor } from "../lib/session.server";
import { formatDateTime } from "../lib/format";
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
  return { link, domains: domains.filter((d) => d.verified).map((d) => d.name) };
}

type ActionData = { intent: "save"; error?: FormError; values?: LinkFormValues; saved?: boolean } | { intent: "delete"; error: FormError };

export async function action({ context, request, params }: ActionFunctionArgs): Promise<ActionData> {
  await requireActor(context, request);
  const form = await request.formData();
  const id = params.id ?? "";
  if (form.get("intent") === "delete") {
    if (form.get("confirm") !== "yes") return { intent: "delete", error: fieldError({ confirm: ["tick the box to confirm"] }) };
    const r = await attempt(request, () => context.caller.link.delete({ id }));
    if (!r.ok) return { intent: "delete", error: r.error };
    throw redirect("/links?deleted=1");
  }
  const current = await load(request, () => context.caller.link.get({ id }));
  const { values, input } = updateInputFrom(form, current);
  const r = await attempt(request, () => context.caller.link.update(input as UpdateLinkInput));
  if (!r.ok) return { intent: "save", error: r.error, values };
  return { intent: "save", saved: true };
}

export default function EditLink() {
  const { link, domains } = useLoaderData<typeof loader>();
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
      {link.deleted_at ? <p className="alert-info mb-4">This link was deleted on {formatDateTime(link.deleted_at)}. Its analytics stay readable.</p> : null}
      <div className="grid gap-6 lg:grid-cols-[1fr_18rem]">
        <div className="min-w-0">
          {/* key: a successful save shows the stored values again */}
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
          <div className="card space-y-3">
            <h2 className="font-semibold">QR code</h2>
            <img
              src={`/links/${link.id}/qr?format=svg`}
              alt={`QR code for ${link.short_url}`}
              width={200}
              height={200}
              className="mx-auto h-[200px] w-[200px] rounded bg-white p-2"
            />
            <div className="flex flex-wrap gap-2">
              <a
                href={`/links/${link.id}/qr?format=png&download=1`}
                download
                className="btn-secondary"
                data-testid="qr-png"
                aria-label="Download QR code as PNG"
              >
                PNG
              </a>
              <a href={`/links/${link.id}/qr?format=svg&download=1`} download className="btn-secondary" aria-label="Download QR code as SVG">
                SVG
              </a>
            </div>
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
