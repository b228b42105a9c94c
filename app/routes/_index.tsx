import type { ActionFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useNavigation } from "@remix-run/react";
import { CopyButton, Field, fieldErrors, FormAlert } from "../components/ui";
import { formError } from "../lib/errors.server";
import { useRootData } from "../lib/env";
import type { FormError } from "../lib/messages";

export const meta: MetaFunction = () => [{ title: "Links · short links, linktrees, analytics" }];

type ActionData = { ok: true; short_url: string; url: string } | { ok: false; error: FormError; url: string };

export async function action({ context, request }: ActionFunctionArgs): Promise<ActionData> {
  const form = await request.formData();
  const url = String(form.get("url") ?? "").trim();
  try {
    // Signed out: the link lands in the `public` workspace; signed in: in the caller's own.
    const link = await context.caller.link.create({ url });
    return { ok: true, short_url: link.short_url, url };
  } catch (e) {
    return { ok: false, error: formError(e), url };
  }
}

export default function Landing() {
  const data = useActionData<typeof action>();
  const { viewer } = useRootData();
  const busy = useNavigation().state === "submitting";
  return (
    <div className="mx-auto max-w-2xl py-6 sm:py-12">
      <h1 className="text-3xl font-bold tracking-tight sm:text-5xl">Short links that tell you who clicked.</h1>
      <p className="mt-4 text-lg text-slate-600 dark:text-slate-400">
        Custom slugs, expiry, device and country targeting, passwords, share cards, linktree pages and click analytics.
      </p>
      <Form method="post" className="card mt-8 space-y-3" aria-labelledby="shorten-title">
        <h2 id="shorten-title" className="text-lg font-semibold">
          Shorten a URL {viewer ? null : <span className="text-sm font-normal text-slate-500">— no account needed</span>}
        </h2>
        <div className="flex flex-col gap-2 sm:flex-row sm:items-start">
          <Field
            className="flex-1"
            label="Long URL"
            name="url"
            type="url"
            required
            placeholder="https://example.com/a/long/page"
            defaultValue={data && !data.ok ? data.url : ""}
            errors={data && !data.ok ? fieldErrors(data.error, "url") : []}
          />
          <button type="submit" className="btn-primary sm:mt-6" disabled={busy}>
            Shorten
          </button>
        </div>
        {data && !data.ok ? <FormAlert error={data.error} /> : null}
        {data?.ok ? (
          <div role="status" className="alert-success flex flex-wrap items-center gap-3">
            <span>Your short link:</span>
            <a href={data.short_url} className="font-mono font-semibold" data-testid="short-url">
              {data.short_url}
            </a>
            <CopyButton value={data.short_url} />
          </div>
        ) : null}
      </Form>
      <p className="mt-6 text-sm text-slate-600 dark:text-slate-400">
        {viewer ? (
          <Link to="/links">Go to your links →</Link>
        ) : (
          <>
            {/* Underlined: inside a sentence, colour alone would not mark it as a link. */}
            <Link to="/login" className="underline">
              Sign in
            </Link>{" "}
            to manage links, see analytics and build a linktree.
          </>
        )}
      </p>
    </div>
  );
}
