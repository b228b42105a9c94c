import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation, useRevalidator } from "@remix-run/react";
import { useEffect, useState } from "react";
import { ConfirmDelete, CopyButton, Field, fieldErrors, FormAlert, PageHeader, Success } from "../components/ui";
import {
  COLOR_KEYS,
  LookFields,
  Preview,
  ScheduleFields,
  scheduleFromForm,
  SocialsFields,
  socialsFromForm,
  type Look,
  type Palette,
  type Social,
} from "../components/linktree-editor";
import { attempt, fieldError, load, unconfirmed, uploadError } from "../lib/errors.server";
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
  const looks = await load(request, () => context.caller.linktree.looks({}));
  const { domains } = await load(request, () => context.caller.domain.list({}));
  return {
    tree,
    stats,
    looks,
    domains: domains.filter((d) => d.verified).map((d) => d.name),
    switched: new URL(request.url).searchParams.get("switched"),
  };
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
      const values = { title: s("title"), slug: s("slug"), bio: s("bio"), avatar_url: s("avatar_url"), domain: s("domain") };
      return run(() => lt.update({ id, ...profileInput(values) }), "Profile saved.", values);
    }
    case "avatar": {
      // The server stored (and resized) the image before this action ran: what is left is its URL, or why it was refused.
      const refused = uploadError(form);
      if (refused) return { intent, error: refused.error };
      return run(() => lt.update({ id, avatar_url: s("avatar_url") }), "Avatar uploaded.");
    }
    case "look": {
      const look = lookFromForm(form);
      return run(() => lt.update({ id, ...look.input }), "Look saved.", look.values);
    }
    case "socials": {
      const socials = socialsFromForm(form);
      return run(() => lt.update({ id, socials: (socials.length ? socials : null) as never }), "Profiles saved.", { socials: JSON.stringify(socials) });
    }
    case "publish":
      return run(() => lt.update({ id, published: form.get("published") === "true" }), form.get("published") === "true" ? "Published." : "Unpublished.");
    case "addItem": {
      const item = newItemFromForm(form);
      return run(() => lt.createItem({ id, ...item.input }), item.done, item.values);
    }
    case "updateItem": {
      const kind = s("kind");
      const values = { title: String(form.get("title") ?? "").trim(), url: s("url") };
      const window = scheduleFromForm(form);
      return run(() => lt.updateItem({ id, itemId, title: values.title, ...(kind === "link" ? { url: values.url } : {}), ...window }), "Saved.", values);
    }
    case "toggleItem":
      return run(() => lt.updateItem({ id, itemId, active: form.get("active") === "true" }), "Saved.");
    case "moveItem":
      return run(() => lt.updateItem({ id, itemId, position: Number(s("position")) }), "Moved.");
    case "deleteItem":
      return run(() => lt.deleteItem({ id, itemId }), "Button deleted.");
    case "delete": {
      const refused = unconfirmed(form);
      if (refused) return { intent, error: refused };
      const r = await attempt(request, () => lt.delete({ id }));
      if (!r.ok) return { intent, error: r.error };
      throw redirect("/linktrees");
    }
    default:
      return { intent, error: fieldError({ intent: ["unknown action"] }) };
  }
}

/** The profile form's fields as the update's input: an empty field clears its member. */
const profileInput = (v: { title: string; slug: string; bio: string; avatar_url: string; domain: string }) => ({
  title: v.title,
  slug: v.slug,
  bio: v.bio || null,
  avatar_url: v.avatar_url || null,
  domain: v.domain || null,
});

/** The look form: only the ticked colours are the owner's; the others follow the theme. */
function lookFromForm(form: FormData) {
  const s = (k: string) => String(form.get(k) ?? "").trim();
  const colors = Object.fromEntries(COLOR_KEYS.filter((k) => form.get(`own_${k}`)).map((k) => [k, s(`color_${k}`)]));
  const values = { theme: s("theme"), button_style: s("button_style") || "rounded", colors: JSON.stringify(colors) };
  const input = {
    theme: (values.theme || null) as "light" | null,
    button_style: values.button_style === "rounded" ? null : (values.button_style as "square"),
    colors: Object.keys(colors).length ? colors : null,
  };
  return { values, input };
}

/** The add-item form: a button (link), a heading or a text, with its optional window. */
function newItemFromForm(form: FormData) {
  const kind = (String(form.get("kind") ?? "").trim() || "link") as "link" | "heading" | "text";
  const values = { title: form.get("title") === null ? "" : String(form.get("title")).trim(), url: String(form.get("url") ?? "").trim(), kind };
  const window = scheduleFromForm(form);
  const input = {
    title: values.title,
    ...(kind === "link" ? { url: values.url } : { kind }),
    ...(window.starts_at !== null ? { starts_at: window.starts_at } : {}),
    ...(window.ends_at !== null ? { ends_at: window.ends_at } : {}),
  };
  return { values, input, done: kind === "link" ? "Button added." : kind === "heading" ? "Heading added." : "Text added." };
}

type Item = {
  id: string;
  title: string;
  url?: string;
  short_url?: string;
  position: number;
  active: boolean;
  kind?: "heading" | "text";
  starts_at?: number;
  ends_at?: number;
};

/** An item's schedule in words, or null when it has none. */
function scheduleNote(item: Item, now: number): string | null {
  if (item.starts_at === undefined && item.ends_at === undefined) return null;
  if (item.ends_at !== undefined && now >= item.ends_at) return "ended";
  if (item.starts_at !== undefined && now < item.starts_at) return "scheduled";
  return "shown for a while";
}
const shownNow = (i: Item, now: number) => i.active && (i.starts_at === undefined || i.starts_at <= now) && (i.ends_at === undefined || now < i.ends_at);

export default function LinktreeEditor() {
  const { tree, stats, looks, domains, switched } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const { redirectUrl } = useEnv();
  const publicUrl = tree.domain ? `https://${tree.domain}/${tree.slug}` : `${redirectUrl}/${tree.slug}`;
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
  const lookErr = data?.intent === "look" ? data.error : null;
  const storedLook = (): Look => ({ theme: tree.theme ?? "", button_style: tree.button_style ?? "rounded", colors: (tree.colors ?? {}) as Partial<Palette> });
  const [look, setLook] = useState<Look>(() =>
    lookErr && data?.values ? { theme: data.values.theme, button_style: data.values.button_style, colors: JSON.parse(data.values.colors) } : storedLook(),
  );
  useEffect(() => {
    if (!lookErr) setLook(storedLook());
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [tree, lookErr]);
  const socialsErr = data?.intent === "socials" ? data.error : null;
  const storedSocials = (): Social[] => (tree.socials ?? []).map((x) => ({ ...x }));
  const [socials, setSocials] = useState<Social[]>(() => (socialsErr && data?.values ? JSON.parse(data.values.socials) : storedSocials()));
  useEffect(() => {
    if (!socialsErr) setSocials(storedSocials());
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [tree, socialsErr]);
  const [items, setItems] = useState<Item[]>(tree.items);
  useEffect(() => setItems(tree.items), [tree.items]);
  const counts = Object.fromEntries(stats.items.map((i) => [i.id, i.count]));
  const [now] = useState(() => Date.now());

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
      {data?.error && !["profile", "avatar", "look", "socials", "addItem", "updateItem"].includes(data.intent) ? (
        <FormAlert error={data.error} className="mb-4" />
      ) : null}

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
              label="Domain"
              name="domain"
              errors={fieldErrors(profileErr, "domain")}
              hint={domains.length ? "The page's address is this domain and the slug." : "Add and verify a domain on the Domains page to use your own."}
            >
              {({ id, describedBy, invalid }) => (
                <select
                  id={id}
                  name="domain"
                  className="input"
                  defaultValue={pv?.domain ?? tree.domain ?? ""}
                  aria-invalid={invalid || undefined}
                  aria-describedby={describedBy}
                >
                  <option value="">{new URL(redirectUrl).host} (default)</option>
                  {domains.map((d) => (
                    <option key={d} value={d}>
                      {d}
                    </option>
                  ))}
                </select>
              )}
            </Field>
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

          <AvatarUpload error={data?.intent === "avatar" ? data.error : null} />

          <Form method="post" className="card space-y-4" aria-labelledby="h-look">
            <h2 id="h-look" className="text-lg font-semibold">
              Look
            </h2>
            <FormAlert error={lookErr} />
            <LookFields looks={looks} look={look} setLook={setLook} error={lookErr} />
            <button type="submit" name="intent" value="look" className="btn-primary">
              Save look
            </button>
          </Form>

          <Form method="post" className="card space-y-4" aria-labelledby="h-socials">
            <h2 id="h-socials" className="text-lg font-semibold">
              Social profiles
            </h2>
            <p className="hint !mt-0">Shown as a row of icons under the bio.</p>
            <FormAlert error={socialsErr} />
            <SocialsFields looks={looks} socials={socials} setSocials={setSocials} errors={socialsErr?.fields?.socials ?? []} />
            <button type="submit" name="intent" value="socials" className="btn-primary">
              Save profiles
            </button>
          </Form>

          <ItemsEditor treeId={tree.id} items={items} setItems={setItems} counts={counts} data={data} now={now} />

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
          <Preview profile={profile} look={look} looks={looks} socials={socials} items={items.filter((i) => shownNow(i, now))} />
        </aside>
      </div>
    </>
  );
}

const AVATAR_LIMIT = 2 * 1024 * 1024;

/** The page's avatar from a file: the server checks it, squares it to 400×400 and sets the page's avatar URL. */
function AvatarUpload({ error }: { error: FormError | null | undefined }) {
  return (
    <Form method="post" encType="multipart/form-data" className="card space-y-4" aria-labelledby="h-avatar">
      <h2 id="h-avatar" className="text-lg font-semibold">
        Avatar image
      </h2>
      <FormAlert error={error} />
      <Field
        label="Upload an image"
        name="avatar"
        type="file"
        accept="image/png,image/jpeg,image/webp"
        required
        errors={fieldErrors(error, "avatar")}
        hint="PNG, JPEG or WebP, up to 2 MB. It is cropped to a square of 400 by 400 pixels."
        // A much larger upload is refused whole before it reaches the page: say so before sending.
        onChange={(e) => {
          const file = e.currentTarget.files?.[0];
          e.currentTarget.setCustomValidity(file && file.size > AVATAR_LIMIT ? "The image must be at most 2 MB." : "");
        }}
      />
      <button type="submit" name="intent" value="avatar" className="btn-primary">
        Upload avatar
      </button>
    </Form>
  );
}

const KIND_LABELS = { link: "Button", heading: "Heading", text: "Text" } as const;

function ItemsEditor({
  treeId,
  items,
  setItems,
  counts,
  data,
  now,
}: {
  treeId: string;
  items: Item[];
  setItems: (i: Item[]) => void;
  counts: Record<string, number>;
  data: ActionData | undefined;
  now: number;
}) {
  const { apiUrl } = useEnv();
  const revalidator = useRevalidator();
  const busy = useNavigation().state !== "idle";
  const [dragging, setDragging] = useState<string | null>(null);
  const [status, setStatus] = useState("");
  const addErr = data?.intent === "addItem" ? data.error : null;
  const [kind, setKind] = useState<"link" | "heading" | "text">(() => (addErr && data?.values?.kind ? (data.values.kind as "link") : "link"));

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
        Buttons, headings and text
      </h2>
      <p className="hint !mt-0">Drag an entry to reorder it, or use the Up and Down buttons.</p>
      <p aria-live="polite" className="sr-only">
        {status}
      </p>
      {items.length === 0 ? <p className="text-sm text-slate-600 dark:text-slate-400">Nothing yet.</p> : null}
      <ol className="space-y-2">
        {items.map((item, i) => {
          const err = data?.intent === "updateItem" && data.itemId === item.id ? data.error : null;
          const note = scheduleNote(item, now);
          const itemKind = item.kind ?? "link";
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
                  <span className={itemKind === "heading" ? "font-bold" : "font-medium"}>{item.title}</span>{" "}
                  <span className="badge">{KIND_LABELS[itemKind]}</span> {item.active ? null : <span className="badge">hidden</span>}{" "}
                  {note ? <span className="badge">{note}</span> : null}
                  {itemKind === "link" ? (
                    <span className="block truncate text-xs text-slate-500">
                      {item.url} · {formatNumber(counts[item.id] ?? 0)} clicks
                    </span>
                  ) : null}
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
                <Form method="post" className="mt-2 space-y-3">
                  <FormAlert error={err} />
                  <input type="hidden" name="itemId" value={item.id} />
                  <input type="hidden" name="kind" value={itemKind} />
                  <div className={itemKind === "link" ? "grid gap-3 sm:grid-cols-2" : ""}>
                    <TitleField kind={itemKind} defaultValue={item.title} errors={fieldErrors(err, "title")} />
                    {itemKind === "link" ? <Field label="URL" name="url" type="url" required defaultValue={item.url} errors={fieldErrors(err, "url")} /> : null}
                  </div>
                  <ScheduleFields startsAt={item.starts_at} endsAt={item.ends_at} error={err} />
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
        className="space-y-3 border-t border-slate-200 pt-4 dark:border-slate-800"
        aria-label="Add an entry"
        key={data?.intent === "addItem" && data.ok ? `added-${items.length}` : "add"}
      >
        {addErr ? <FormAlert error={addErr} /> : null}
        <fieldset>
          <legend className="label">Kind</legend>
          <div className="mt-1 flex flex-wrap gap-4">
            {(["link", "heading", "text"] as const).map((k) => (
              <label key={k} className="flex items-center gap-2 text-sm">
                <input type="radio" name="kind" value={k} checked={kind === k} onChange={() => setKind(k)} />
                {KIND_LABELS[k]}
              </label>
            ))}
          </div>
        </fieldset>
        <div className={kind === "link" ? "grid gap-3 sm:grid-cols-2" : ""}>
          <TitleField
            kind={kind}
            label={kind === "link" ? "Button title" : undefined}
            defaultValue={addErr ? data?.values?.title : ""}
            errors={fieldErrors(addErr, "title")}
          />
          {kind === "link" ? (
            <Field label="Button URL" name="url" type="url" required defaultValue={addErr ? data?.values?.url : ""} errors={fieldErrors(addErr, "url")} />
          ) : null}
        </div>
        <details>
          <summary className="cursor-pointer text-sm">Schedule (optional)</summary>
          <div className="mt-2">
            <ScheduleFields error={addErr} />
          </div>
        </details>
        <button type="submit" name="intent" value="addItem" className="btn-primary">
          Add {KIND_LABELS[kind].toLowerCase()}
        </button>
      </Form>
    </section>
  );
}

/** A heading or button title (100 characters), or a text item's words (500, several lines). */
function TitleField({ kind, label, defaultValue, errors }: { kind: "link" | "heading" | "text"; label?: string; defaultValue?: string; errors: string[] }) {
  if (kind !== "text")
    return (
      <Field label={label ?? (kind === "heading" ? "Heading" : "Title")} name="title" required maxLength={100} defaultValue={defaultValue} errors={errors} />
    );
  return (
    <Field label={label ?? "Text"} name="title" errors={errors} hint="Up to 500 characters of plain text.">
      {({ id, describedBy, invalid }) => (
        <textarea
          id={id}
          name="title"
          rows={3}
          required
          maxLength={500}
          className="input"
          defaultValue={defaultValue}
          aria-invalid={invalid || undefined}
          aria-describedby={describedBy}
        />
      )}
    </Field>
  );
}
