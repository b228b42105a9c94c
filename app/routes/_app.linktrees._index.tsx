import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { Field, fieldErrors, FormAlert, ListBesideForm, PageHeader } from "../components/ui";
import { attempt, load } from "../lib/errors.server";
import { useEnv } from "../lib/env";
import { formatDate } from "../lib/format";
import { requireActor } from "../lib/session.server";

export const meta: MetaFunction = () => [{ title: "Linktrees · Links" }];

export async function loader({ context, request }: LoaderFunctionArgs) {
  await requireActor(context, request);
  return load(request, () => context.caller.linktree.list({}));
}

export async function action({ context, request }: ActionFunctionArgs) {
  await requireActor(context, request);
  const form = await request.formData();
  const values = { slug: String(form.get("slug") ?? "").trim(), title: String(form.get("title") ?? "").trim() };
  const r = await attempt(request, () => context.caller.linktree.create(values));
  if (!r.ok) return { error: r.error, values };
  throw redirect(`/linktrees/${r.value.id}`);
}

export default function Linktrees() {
  const { linktrees } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const busy = useNavigation().state === "submitting";
  const { redirectUrl } = useEnv();
  return (
    <>
      <PageHeader title="Linktrees" subtitle="A profile page with your buttons, on the short-link domain or one of your own." />
      <ListBesideForm
        items={linktrees}
        label="Linktrees"
        listClassName="space-y-3"
        empty="No linktree yet. Create one with the form."
        render={(t) => (
          <li key={t.id} className="card !p-4">
            <div className="flex flex-wrap items-center justify-between gap-3">
              <div className="min-w-0">
                <p className="flex flex-wrap items-center gap-2 font-semibold">
                  <Link to={`/linktrees/${t.id}`}>{t.title}</Link>
                  <span className="badge">{t.published ? "published" : "draft"}</span>
                </p>
                <p className="truncate font-mono text-sm text-slate-600 dark:text-slate-400">
                  {t.domain ?? redirectUrl.replace(/^https?:\/\//, "")}/{t.slug} · created {formatDate(t.created_at)}
                </p>
              </div>
              <Link to={`/linktrees/${t.id}`} className="btn-secondary" aria-label={`Edit ${t.title}`}>
                Edit
              </Link>
            </div>
          </li>
        )}
        aside={
          <Form method="post" className="card space-y-4" aria-labelledby="new-tree">
            <h2 id="new-tree" className="text-lg font-semibold">
              New linktree
            </h2>
            <FormAlert error={data?.error} />
            <Field label="Title" name="title" required maxLength={100} defaultValue={data?.values.title} errors={fieldErrors(data?.error, "title")} />
            <Field
              label="Slug"
              name="slug"
              required
              pattern="[0-9a-z\-]{1,50}"
              maxLength={50}
              defaultValue={data?.values.slug}
              errors={fieldErrors(data?.error, "slug")}
              hint={`Your page will be at ${redirectUrl.replace(/^https?:\/\//, "")}/<slug>.`}
            />
            <button type="submit" className="btn-primary" disabled={busy}>
              Create linktree
            </button>
          </Form>
        }
      />
    </>
  );
}
