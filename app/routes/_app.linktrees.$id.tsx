import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation, useRevalidator } from "@remix-run/react";
import { useEffect, useState } from "react";
import { ConfirmDelete, CopyButton, Field, fieldErrors, FormAlert, PageHeader, Success } from "../components/ui";
import { attempt, fieldError, load } from "../lib/errors.server";
import { useEnv } from "../lib/env";
import { formatNumber } from "../lib/format";
import type { FormError } from "../lib/messages";
import { loadAcrossWorkspaces } from "../lib/locate.server";
import { requireActor } from "../lib/session.server";
import { errorCode, trpc } from "../lib/trpc.client";
import { messageFor } from "../lib/messages";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.tree.title ?? "Linktree"} · Links` }];

export async function loader({ context, request, params }: LoaderFunctionArgs) {
  await requireActor(context, request);
  const id = params.id ?? "";
  // A linktree of another of the user's workspaces opens there (switching, and saying so).
  const tree = await loadAcrossWorkspaces(context, request, "linktree", id, () => context.caller.linktree.get({ id }));
  const stats = await load(request, () => context.caller.linktree.analytics({ id }));
  return { tree, stats, switched: new URL(request.url).searchParams.get("switched") };
}

type ActionData = { intent: string; itemId?: string; error?: FormError; ok?: string; values?: Record<string, string> };

export async function action({ context, request, params }: ActionFunctionArgs): Promise<ActionData> {
  await requireActor(context, request);
  const id = params.id ?? "";
  const form = await request.formData();
  const intent = String(form.get("intent") ?? "");
  const s = (k: string) => String(form.get(k) ?? "").trim();
  const itemId = s("itemId");
  const run = async (fn: () => Promise<unknown>, ok: string, values?: Record<string, string>): Promise<ActionData> => {
    const r = await attempt(request, fn);
    return r.ok ? { intent, itemId, ok } : { intent, itemId, error: r.error, values };
  };
  const lt = context.caller.linktree;
  switch (intent) {
    case "profile": {
      const values = { title: s("title"), slug: s("slug"), bio: s("bio"), avatar_url: s("avatar_url") };
      return run(
        () => lt.update({ id, title: values.title, slug: values.slug, bio: values.bio || null, avatar_url: values.avatar_url || null }),
        "Profile saved.",
        values,
      );
    }
    case "publish":
      return run(() => lt.update({ id, published: form.get("published") === "true" }), form.get("published") === "true" ? "Published." : "Unpublished.");
    case "addItem": {
      const values = { title: s("title"), url: s("url") };
      return run(() => lt.createItem({ id, ...values }), "Button added.", values);
    }
    case "updateItem": {
      const values = { title: s("title"), url: s("url") };
      return run(() => lt.updateItem({ id, itemId, ...values }), "Button saved.", values);
    }
    case "toggleItem":
      return run(() => lt.updateItem({ id, itemId, active: form.get("active") === "true" }), "Saved.");
    case "moveItem":
      return run(() => lt.updateItem({ id, itemId, position: Number(s("position")) }), "Moved.");
    case "deleteItem":
      return run(() => lt.deleteItem({ id, itemId }), "Button deleted.");
    case "delete": {
      if (form.get("confirm") !== "yes") return { intent, error: fieldError({ confirm: ["tick the box to confirm"] }) };
      const r = await attempt(request, () => lt.delete({ id }));
      if (!r.ok) return { intent, error: r.error };
      throw redirect("/linktrees");
    }
    default:
      return { intent, error: fieldError({ intent: ["unknown action"] }) };
  }
}

type Item = { id: string; title: string; url: string; short_url: string; position: number; active: boolean };

export default function LinktreeEditor() {
  const { tree, stats, switched } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const { redirectUrl } = useEnv();
  const publicUrl = `${redirectUrl}/${tree.slug}`;
  const profileErr = data?.intent === "profile" ? data.error : null;
  const pv = profileErr && data?.values ? data.values : null;
  const [profile, setProfile] = useState({
    title: pv?.title ?? tree.title,
    bio: pv?.bio ?? tree.bio ?? "",
    avatar_url: pv?.avatar_url ?? tree.avatar_url ?? "",
    slug: pv?.slug ?? tree.slug,
  });
  useEffect(() => {
    if (!profileErr) setProfile({ title: tree.title, bio: tree.bio ?? "", avatar_url: tree.avatar_url ?? "", slug: tree.slug });
  }, [tree, profileErr]);
  const [items, setItems] = useState<Item[]>(tree.items);
  useEffect(() => setItems(tree.items), [tree.items]);
  const counts = Object.fromEntries(stats.items.map((i) => [i.id, i.count]));

  return (
    <>
      <PageHeader title={tree.title} subtitle={<Link to="/linktrees">← All linktrees</Link>}>
        <Form method="post">
          <input type="hidden" name="published" value={tree.published ? "false" : "true"} />
          <button type="submit" name="intent" value="publish" className={tree.published ? "btn-secondary" : "btn-primary"} aria-describedby="pub-state">
            {tree.published ? "Unpublish" : "Publish"}
          </button>
        </Form>
      </PageHeader>
      <p id="pub-state" className="-mt-4 mb-6 flex flex-wrap items-center gap-2 text-sm">
        <span className="badge">{tree.published ? "Published" : "Draft — the public page answers 404"}</span>
        <a href={publicUrl} className="break-all font-mono" data-testid="public-url">
          {publicUrl}
        </a>
        <CopyButton value={publicUrl} label="Copy link" className="btn-ghost" />
      </p>
      {switched && !data ? (
        <div className="mb-4">
          <Success>Switched to workspace {switched} to open this linktree.</Success>
        </div>
      ) : null}
      {data?.ok && !data.error ? (
        <div className="mb-4">
          <Success>{data.ok}</Success>
        </div>
      ) : null}
      {data?.error && !["profile", "addItem", "updateItem"].includes(data.intent) ? <FormAlert error={data.error} className="mb-4" /> : null}

      <div className="grid gap-6 lg:grid-cols-[1fr_20rem]">
        <div className="min-w-0 space-y-6">
          <Form method="post" className="card space-y-4" aria-labelledby="h-profile">
            <h2 id="h-profile" className="text-lg font-semibold">
              Profile
            </h2>
            <FormAlert error={profileErr} />
            <Field
              label="Title"
              name="title"
              required
              maxLength={100}
              value={profile.title}
              onChange={(e) => setProfile({ ...profile, title: e.target.value })}
              errors={fieldErrors(profileErr, "title")}
            />
            <Field label="Bio" name="bio" errors={fieldErrors(profileErr, "bio")} hint={`${profile.bio.length}/300`}>
              {({ id, describedBy, invalid }) => (
                <textarea
                  id={id}
                  name="bio"
                  rows={3}
                  maxLength={300}
                  className="input"
                  value={profile.bio}
                  onChange={(e) => setProfile({ ...profile, bio: e.target.value })}
                  aria-invalid={invalid || undefined}
                  aria-describedby={describedBy}
                />
              )}
            </Field>
            <Field
              label="Avatar URL"
              name="avatar_url"
              type="url"
              value={profile.avatar_url}
              onChange={(e) => setProfile({ ...profile, avatar_url: e.target.value })}
              errors={fieldErrors(profileErr, "avatar_url")}
              hint="An absolute http(s) image URL."
            />
            <Field
              label="Slug"
              name="slug"
              required
              pattern="[0-9a-z\-]{1,50}"
              maxLength={50}
              value={profile.slug}
              onChange={(e) => setProfile({ ...profile, slug: e.target.value.toLowerCase() })}
              errors={fieldErrors(profileErr, "slug")}
              hint="Renaming moves the page to the new address."
            />
            <button type="submit" name="intent" value="profile" className="btn-primary">
              Save profile
            </button>
          </Form>

          <ItemsEditor treeId={tree.id} items={items} setItems={setItems} counts={counts} data={data} />

          <section className="card" aria-labelledby="h-stats">
            <h2 id="h-stats" className="mb-3 text-lg font-semibold">
              Analytics <span className="text-sm font-normal text-slate-500">(all time)</span>
            </h2>
            <div className="grid grid-cols-2 gap-4">
              <div>
                <p className="text-sm text-slate-600 dark:text-slate-400">Page views</p>
                <p className="text-2xl font-semibold" data-testid="tree-views">
                  {formatNumber(stats.views)}
                </p>
              </div>
              <div>
                <p className="text-sm text-slate-600 dark:text-slate-400">Button clicks</p>
                <p className="text-2xl font-semibold" data-testid="tree-clicks">
                  {formatNumber(stats.clicks)}
                </p>
              </div>
            </div>
          </section>

          <Form method="post" className="card">
            <FormAlert error={data?.intent === "delete" ? data.error : null} className="mb-3" />
            <ConfirmDelete label="Delete linktree" what={`the linktree ${tree.slug} and its buttons`} />
          </Form>
        </div>
        <aside aria-label="Live preview" className="lg:sticky lg:top-4 lg:self-start">
          <h2 className="mb-2 text-sm font-medium text-slate-600 dark:text-slate-400">Live preview</h2>
          <Preview profile={profile} items={items.filter((i) => i.active)} />
        </aside>
      </div>
    </>
  );
}

function ItemsEditor({
  treeId,
  items,
  setItems,
  counts,
  data,
}: {
  treeId: string;
  items: Item[];
  setItems: (i: Item[]) => void;
  counts: Record<string, number>;
  data: ActionData | undefined;
}) {
  const { apiUrl } = useEnv();
  const revalidator = useRevalidator();
  const busy = useNavigation().state !== "idle";
  const [dragging, setDragging] = useState<string | null>(null);
  const [status, setStatus] = useState("");
  const addErr = data?.intent === "addItem" ? data.error : null;

  /** Drag and drop saves the whole order at once through linktree.reorderItems. */
  async function reorder(next: Item[]) {
    setItems(next);
    try {
      await trpc(apiUrl).linktree.reorderItems.mutate({ id: treeId, itemIds: next.map((i) => i.id) });
      setStatus("Order saved.");
    } catch (e) {
      setStatus(messageFor(errorCode(e)));
    }
    revalidator.revalidate();
  }
  function onDrop(targetId: string) {
    if (!dragging || dragging === targetId) return;
    const from = items.findIndex((i) => i.id === dragging);
    const to = items.findIndex((i) => i.id === targetId);
    const next = [...items];
    const [moved] = next.splice(from, 1);
    next.splice(to, 0, moved);
    setDragging(null);
    void reorder(next);
  }

  return (
    <section className="card space-y-4" aria-labelledby="h-items">
      <h2 id="h-items" className="text-lg font-semibold">
        Buttons
      </h2>
      <p className="hint !mt-0">Drag a button to reorder it, or use the Up and Down buttons.</p>
      <p aria-live="polite" className="sr-only">
        {status}
      </p>
      {items.length === 0 ? <p className="text-sm text-slate-600 dark:text-slate-400">No buttons yet.</p> : null}
      <ol className="space-y-2">
        {items.map((item, i) => {
          const err = data?.intent === "updateItem" && data.itemId === item.id ? data.error : null;
          return (
            <li
              key={item.id}
              draggable
              onDragStart={(e) => {
                setDragging(item.id);
                e.dataTransfer.effectAllowed = "move";
                e.dataTransfer.setData("text/plain", item.id);
              }}
              onDragOver={(e) => e.preventDefault()}
              onDrop={(e) => {
                e.preventDefault();
                onDrop(item.id);
              }}
              onDragEnd={() => setDragging(null)}
              className={`rounded-md border p-3 ${dragging === item.id ? "border-indigo-400 opacity-60" : "border-slate-200 dark:border-slate-800"} ${item.active ? "" : "bg-slate-50 dark:bg-slate-900/50"}`}
              data-testid="item-row"
            >
              <div className="flex flex-wrap items-center gap-2">
                <span className="cursor-grab select-none text-slate-400" aria-hidden="true">
                  ⠿
                </span>
                <span className="min-w-0 flex-1">
                  <span className="font-medium">{item.title}</span> {item.active ? null : <span className="badge">hidden</span>}
                  <span className="block truncate text-xs text-slate-500">
                    {item.url} · {formatNumber(counts[item.id] ?? 0)} clicks
                  </span>
                </span>
                <Form method="post" className="flex gap-1">
                  <input type="hidden" name="itemId" value={item.id} />
                  <input type="hidden" name="intent" value="moveItem" />
                  <button
                    type="submit"
                    name="position"
                    value={i - 1}
                    className="btn-ghost !px-2"
                    disabled={i === 0 || busy}
                    aria-label={`Move ${item.title} up`}
                  >
                    ↑
                  </button>
                  <button
                    type="submit"
                    name="position"
                    value={i + 1}
                    className="btn-ghost !px-2"
                    disabled={i === items.length - 1 || busy}
                    aria-label={`Move ${item.title} down`}
                  >
                    ↓
                  </button>
                </Form>
                <Form method="post">
                  <input type="hidden" name="itemId" value={item.id} />
                  <input type="hidden" name="active" value={item.active ? "false" : "true"} />
                  <button
                    type="submit"
                    name="intent"
                    value="toggleItem"
                    className="btn-ghost"
                    aria-label={`${item.active ? "Deactivate" : "Activate"} ${item.title}`}
                  >
                    {item.active ? "Deactivate" : "Activate"}
                  </button>
                </Form>
                <Form method="post">
                  <input type="hidden" name="itemId" value={item.id} />
                  <button
                    type="submit"
                    name="intent"
                    value="deleteItem"
                    className="btn-ghost text-red-700 dark:text-red-400"
                    aria-label={`Delete ${item.title}`}
                  >
                    Delete
                  </button>
                </Form>
              </div>
              <details className="mt-2" open={Boolean(err)}>
                <summary className="cursor-pointer text-sm">Edit</summary>
                <Form method="post" className="mt-2 grid gap-3 sm:grid-cols-[1fr_1fr_auto] sm:items-end">
                  <input type="hidden" name="itemId" value={item.id} />
                  <Field label="Title" name="title" required maxLength={100} defaultValue={item.title} errors={fieldErrors(err, "title")} />
                  <Field label="URL" name="url" type="url" required defaultValue={item.url} errors={fieldErrors(err, "url")} />
                  <button type="submit" name="intent" value="updateItem" className="btn-secondary">
                    Save
                  </button>
                </Form>
              </details>
            </li>
          );
        })}
      </ol>
      <Form
        method="post"
        className="grid gap-3 border-t border-slate-200 pt-4 dark:border-slate-800 sm:grid-cols-[1fr_1fr_auto] sm:items-start"
        aria-label="Add a button"
        key={data?.intent === "addItem" && data.ok ? `added-${items.length}` : "add"}
      >
        <Field
          label="Button title"
          name="title"
          required
          maxLength={100}
          defaultValue={addErr ? data?.values?.title : ""}
          errors={fieldErrors(addErr, "title")}
        />
        <Field label="Button URL" name="url" type="url" required defaultValue={addErr ? data?.values?.url : ""} errors={fieldErrors(addErr, "url")} />
        <button type="submit" name="intent" value="addItem" className="btn-primary sm:mt-6">
          Add button
        </button>
        {addErr ? <FormAlert error={addErr} className="sm:col-span-3" /> : null}
      </Form>
    </section>
  );
}

/** What visitors will see, drawn from the form as it is typed. */
function Preview({ profile, items }: { profile: { title: string; bio: string; avatar_url: string }; items: Item[] }) {
  const avatar = /^https?:\/\/./.test(profile.avatar_url) ? profile.avatar_url : null;
  return (
    <div
      className="mx-auto w-full max-w-[20rem] rounded-[2rem] border-8 border-slate-800 bg-gradient-to-b from-indigo-50 to-white p-4 dark:border-slate-700 dark:from-slate-900 dark:to-slate-950"
      data-testid="preview"
    >
      <div className="flex min-h-[24rem] flex-col items-center gap-3 text-center">
        <div className="h-20 w-20 overflow-hidden rounded-full bg-slate-200 dark:bg-slate-800">
          {avatar ? <img src={avatar} alt="" width={80} height={80} className="h-full w-full object-cover" /> : null}
        </div>
        <p className="text-lg font-bold">{profile.title || "Title"}</p>
        {profile.bio ? <p className="text-sm text-slate-600 dark:text-slate-300">{profile.bio}</p> : null}
        <ul className="mt-2 w-full space-y-2">
          {items.map((i) => (
            <li key={i.id} className="rounded-full border border-slate-300 bg-white px-4 py-2 text-sm font-medium dark:border-slate-700 dark:bg-slate-900">
              {i.title}
            </li>
          ))}
        </ul>
      </div>
    </div>
  );
}
