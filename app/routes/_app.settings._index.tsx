import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { Field, fieldErrors, FormAlert, Success } from "../components/ui";
import { attempt, fieldError, load, uploadError } from "../lib/errors.server";
import type { FormError } from "../lib/messages";
import { requireActor } from "../lib/session.server";

/** The largest avatar the server stores, for the text of this page. */
const AVATAR_LIMIT = 2 * 1024 * 1024;

export async function loader({ context, request }: LoaderFunctionArgs) {
  await requireActor(context, request);
  return load(request, () => context.caller.account.get());
}

type ActionData = { intent: string; ok?: string; error?: FormError; pendingEmail?: string };

export async function action({ context, request }: ActionFunctionArgs): Promise<ActionData> {
  await requireActor(context, request);
  const account = context.caller.account;
  const form = await request.formData();
  const intent = String(form.get("intent") ?? "");
  const s = (k: string) => String(form.get(k) ?? "").trim();
  if (intent === "avatar") {
    // The server stored the image before this action ran (the avatar form's file never reaches the
    // dashboard): what is left is its URL, or why it was refused.
    const refused = uploadError(form);
    if (refused) return { intent, error: refused.error };
    const r = await attempt(request, () => account.setAvatar({ avatar_url: s("avatar_url") }));
    return r.ok ? { intent, ok: "Avatar updated." } : { intent, error: r.error };
  }
  if (intent === "name") {
    const r = await attempt(request, () => account.update({ name: s("name") }));
    return r.ok ? { intent, ok: "Name saved." } : { intent, error: r.error };
  }
  if (intent === "removeAvatar") {
    const r = await attempt(request, () => account.setAvatar({ avatar_url: null }));
    return r.ok ? { intent: "avatar", ok: "Avatar removed." } : { intent: "avatar", error: r.error };
  }
  if (intent === "email") {
    const r = await attempt(request, () => account.changeEmail({ email: s("email") }));
    return r.ok ? { intent, pendingEmail: s("email") } : { intent, error: r.error };
  }
  if (intent === "emailCode") {
    const r = await attempt(request, () => account.verifyEmail({ code: s("code") }));
    return r.ok ? { intent, ok: "E-mail address changed." } : { intent, error: r.error, pendingEmail: s("email") };
  }
  if (intent === "delete") {
    const me = await load(request, () => account.get());
    if (s("confirm_email").toLowerCase() !== me.user.email.toLowerCase()) {
      return { intent, error: fieldError({ confirm_email: ["type your e-mail address exactly to confirm"] }) };
    }
    const r = await attempt(request, () => account.delete({}));
    if (!r.ok) return { intent, error: r.error };
    throw redirect("/?deleted=1");
  }
  return { intent, error: fieldError({ intent: ["unknown action"] }) };
}

export default function AccountSettings() {
  const { user } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const err = (intent: string) => (data?.intent === intent ? data.error : null);
  const ok = (intent: string) => (data?.intent === intent && data.ok ? <Success>{data.ok}</Success> : null);
  const pending = (data?.intent === "email" && data.pendingEmail) || (data?.intent === "emailCode" && data.error ? data.pendingEmail : null);
  return (
    <div className="grid gap-6 lg:grid-cols-2">
      <Form method="post" className="card space-y-4" aria-labelledby="h-name">
        <h2 id="h-name" className="text-lg font-semibold">
          Name
        </h2>
        {ok("name")}
        <FormAlert error={err("name")} />
        <Field label="Display name" name="name" maxLength={100} defaultValue={user.name ?? ""} autoComplete="name" errors={fieldErrors(err("name"), "name")} />
        <button type="submit" name="intent" value="name" className="btn-primary">
          Save name
        </button>
      </Form>

      <section className="card space-y-4" aria-labelledby="h-avatar">
        <h2 id="h-avatar" className="text-lg font-semibold">
          Avatar
        </h2>
        {ok("avatar")}
        <FormAlert error={err("avatar")} />
        <div className="flex items-center gap-4">
          <div className="h-16 w-16 shrink-0 overflow-hidden rounded-full bg-slate-200 dark:bg-slate-800">
            {user.avatar_url ? (
              <img src={user.avatar_url} alt="Your avatar" width={64} height={64} className="h-full w-full object-cover" data-testid="avatar" />
            ) : null}
          </div>
          {user.avatar_url ? (
            <Form method="post">
              <button type="submit" name="intent" value="removeAvatar" className="btn-ghost">
                Remove
              </button>
            </Form>
          ) : null}
        </div>
        <Form method="post" encType="multipart/form-data" className="space-y-3">
          <Field
            label="Upload an image"
            name="avatar"
            type="file"
            accept="image/png,image/jpeg,image/webp"
            required
            errors={fieldErrors(err("avatar"), "avatar")}
            hint="PNG, JPEG or WebP, up to 2 MB. It is cropped to a square."
            // The server refuses a larger upload whole (413, server/http/app.ts): say so before sending.
            onChange={(e) => {
              const file = e.currentTarget.files?.[0];
              e.currentTarget.setCustomValidity(file && file.size > AVATAR_LIMIT ? "The image must be at most 2 MB." : "");
            }}
          />
          <button type="submit" className="btn-primary">
            Upload avatar
          </button>
        </Form>
      </section>

      <section className="card space-y-4" aria-labelledby="h-email">
        <h2 id="h-email" className="text-lg font-semibold">
          E-mail address
        </h2>
        {ok("emailCode")}
        <p className="text-sm">
          Signed in as <strong>{user.email}</strong>.
        </p>
        {pending ? (
          <Form method="post" className="space-y-3" key="code">
            <p className="alert-info">We sent a code to {pending}. Enter it to finish the change.</p>
            <FormAlert error={err("emailCode")} />
            <input type="hidden" name="email" value={pending} />
            <Field
              label="Code"
              name="code"
              inputMode="numeric"
              autoComplete="one-time-code"
              pattern="[0-9]{6}"
              maxLength={6}
              required
              errors={fieldErrors(err("emailCode"), "code")}
            />
            <button type="submit" name="intent" value="emailCode" className="btn-primary">
              Confirm new address
            </button>
          </Form>
        ) : (
          <Form method="post" className="space-y-3">
            <FormAlert error={err("email")} />
            <Field label="New e-mail address" name="email" type="email" required autoComplete="email" errors={fieldErrors(err("email"), "email")} />
            <button type="submit" name="intent" value="email" className="btn-secondary">
              Send code
            </button>
          </Form>
        )}
      </section>

      <Form method="post" className="card space-y-4 border-red-200 dark:border-red-900" aria-labelledby="h-delete">
        <h2 id="h-delete" className="text-lg font-semibold text-red-700 dark:text-red-400">
          Delete account
        </h2>
        <p className="text-sm">Your workspace, links, linktrees, tokens and sessions are removed and your slugs are freed. This cannot be undone.</p>
        <FormAlert error={err("delete")} />
        <Field label={`Type ${user.email} to confirm`} name="confirm_email" autoComplete="off" required errors={fieldErrors(err("delete"), "confirm_email")} />
        <button type="submit" name="intent" value="delete" className="btn-danger">
          Delete my account
        </button>
      </Form>
    </div>
  );
}
