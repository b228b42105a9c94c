import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, useActionData, useNavigation, useSearchParams } from "@remix-run/react";
import { Field, fieldErrors, FormAlert } from "../components/ui";
import { formError } from "../lib/errors.server";
import { optionalActor, safeRedirect } from "../lib/session.server";
import type { FormError } from "../lib/messages";

export const meta: MetaFunction = () => [{ title: "Sign in · Links" }];

export async function loader({ context, request }: LoaderFunctionArgs) {
  if (await optionalActor(context)) throw redirect(safeRedirect(new URL(request.url).searchParams.get("redirectTo")));
  return null;
}

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
  const [params] = useSearchParams();
  const busy = useNavigation().state !== "idle";
  const redirectTo = params.get("redirectTo") ?? "/links";
  const step = data?.step ?? "email";
  return (
    <div className="mx-auto max-w-md">
      <div className="card">
        <h1 className="text-2xl font-semibold">Sign in</h1>
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
      </div>
    </div>
  );
}
