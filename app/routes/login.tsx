import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, useActionData, useLoaderData, useNavigation, useSearchParams } from "@remix-run/react";
import { Field, fieldErrors, FormAlert } from "../components/ui";
import { formError } from "../lib/errors.server";
import { optionalActor, safeRedirect } from "../lib/session.server";
import type { FormError } from "../lib/messages";

export const meta: MetaFunction = () => [{ title: "Sign in · Links" }];

export async function loader({ context, request }: LoaderFunctionArgs) {
  if (await optionalActor(context)) throw redirect(safeRedirect(new URL(request.url).searchParams.get("redirectTo")));
  return context.caller.auth.methods({});
}

/** Why a single sign-on came back without a session, in plain words. */
const SSO_MESSAGES: Record<string, string> = {
  failed: "Single sign-on did not finish. Please try again.",
  refused: "Your identity provider did not confirm this e-mail address, or it has no account here. Ask an owner of your team for an invitation.",
  unavailable: "Single sign-on is not reachable right now. Please try again in a few minutes.",
  denied: "Sign-in was cancelled at your identity provider, so you are not signed in. Try again when you are ready.",
  rejected: "Your identity provider turned down the sign-in request. An administrator needs to check the single sign-on settings.",
};

type ActionData = { step: "code"; email: string; error?: FormError } | { step: "email"; email: string; error: FormError };

export async function action({ context, request }: ActionFunctionArgs): Promise<ActionData> {
  const form = await request.formData();
  const email = String(form.get("email") ?? "").trim();
  const code = form.get("code");
  if (code === null) {
    try {
      // auth.start sets the pending-sign-in cookie on this response (ctx.res); the browser sends it
      // back with the code, and auth.verify reads it from this route's request.
      await context.caller.auth.start({ email });
      return { step: "code", email };
    } catch (e) {
      return { step: "email", email, error: formError(e) };
    }
  }
  try {
    // auth.verify sets the app_session cookie on this response (ctx.res).
    await context.caller.auth.verify({ email, code: String(code).trim() });
  } catch (e) {
    return { step: "code", email, error: formError(e) };
  }
  throw redirect(safeRedirect(form.get("redirectTo")));
}

export default function Login() {
  const data = useActionData<typeof action>();
  const methods = useLoaderData<typeof loader>();
  const [params] = useSearchParams();
  const busy = useNavigation().state !== "idle";
  const redirectTo = params.get("redirectTo") ?? "/links";
  const step = data?.step ?? "email";
  const ssoReason = params.get("sso") ?? "";
  const sso = Object.hasOwn(SSO_MESSAGES, ssoReason) ? SSO_MESSAGES[ssoReason] : undefined;
  return (
    <div className="mx-auto max-w-md">
      <div className="card">
        <h1 className="text-2xl font-semibold">Sign in</h1>
        {sso ? (
          <p
            role="alert"
            className="mt-4 rounded border border-red-300 bg-red-50 p-3 text-sm text-red-800 dark:border-red-800 dark:bg-red-950 dark:text-red-200"
          >
            {sso}
            {methods.email && (ssoReason === "unavailable" || ssoReason === "rejected") ? " You can still sign in with a code by e-mail below." : null}
          </p>
        ) : null}
        {methods.oidc ? (
          <a href={`/auth/oidc/start?redirectTo=${encodeURIComponent(redirectTo)}`} className="btn-primary mt-4 block w-full text-center">
            {methods.oidc.name}
          </a>
        ) : null}
        {methods.email && methods.oidc ? <p className="mt-4 text-center text-sm text-slate-600 dark:text-slate-400">or with a code by e-mail</p> : null}
        {methods.email ? (
          <>
            <p className="mt-1 text-sm text-slate-600 dark:text-slate-400">
              {step === "email"
                ? "We e-mail you a 6-digit code. New here? The same step creates your account."
                : `We sent a code to ${data?.email}. It is valid for 10 minutes.`}
            </p>
            <FormAlert error={data?.error} className="mt-4" />
            {step === "email" ? (
              <Form method="post" className="mt-4 space-y-4">
                <input type="hidden" name="redirectTo" value={redirectTo} />
                <Field
                  label="E-mail"
                  name="email"
                  type="email"
                  autoComplete="email"
                  required
                  autoFocus
                  defaultValue={data?.email}
                  errors={fieldErrors(data?.error, "email")}
                />
                <button type="submit" className="btn-primary w-full" disabled={busy}>
                  Send code
                </button>
              </Form>
            ) : (
              <Form method="post" className="mt-4 space-y-4" key="code">
                <input type="hidden" name="redirectTo" value={redirectTo} />
                <input type="hidden" name="email" value={data?.email} />
                <Field
                  label="Code"
                  name="code"
                  inputMode="numeric"
                  autoComplete="one-time-code"
                  pattern="[0-9]{6}"
                  maxLength={6}
                  required
                  autoFocus
                  errors={fieldErrors(data?.error, "code")}
                  hint="The 6 digits from the e-mail."
                />
                <button type="submit" className="btn-primary w-full" disabled={busy}>
                  Sign in
                </button>
              </Form>
            )}
            {step === "code" ? (
              <Form method="post" className="mt-3">
                <input type="hidden" name="email" value={data?.email} />
                <button type="submit" className="btn-ghost w-full">
                  Send a new code
                </button>
              </Form>
            ) : null}
          </>
        ) : null}
      </div>
    </div>
  );
}
