import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { FormAlert } from "../components/ui";
import { attempt, formError } from "../lib/errors.server";
import { formatDateTime } from "../lib/format";
import type { FormError } from "../lib/messages";
import { optionalActor, requireActor } from "../lib/session.server";

export const meta: MetaFunction = () => [{ title: "Invitation · Links" }, { name: "robots", content: "noindex" }];

/**
 * The link of an invitation mail (`${APP_URL}/invites/{token}`). Signed out: sign in as the invited
 * address, and come back here. Signed in: what the invitation is for, and Accept. Every refusal in
 * plain words.
 */
export async function loader({ context, params }: LoaderFunctionArgs) {
  const token = params.token ?? "";
  const actor = await optionalActor(context);
  let invite = null;
  try {
    invite = await context.caller.workspace.previewInvite({ token });
  } catch (e) {
    const err = formError(e);
    if (err.error !== "NOT_FOUND" && err.error !== "VALIDATION_FAILED") throw new Response(err.message, { status: 503 });
  }
  const me = actor ? (await context.caller.account.get()).user.email : null;
  return { token, invite, me };
}

export async function action({ context, request, params }: ActionFunctionArgs): Promise<{ error: FormError }> {
  const token = params.token ?? "";
  const form = await request.formData();
  if (form.get("intent") === "signout") {
    // Signed in as someone else: out, and back here to sign in as the invited address.
    try {
      await context.caller.auth.logout();
    } catch {
      // already signed out
    }
    throw redirect(`/invites/${encodeURIComponent(token)}`);
  }
  await requireActor(context, request);
  const r = await attempt(request, () => context.caller.workspace.acceptInvite({ token }));
  if (!r.ok) return { error: r.error };
  // Straight into the workspace just joined.
  await attempt(request, () => context.caller.workspace.switch({ id: r.value.workspace.id }));
  throw redirect("/links?joined=1");
}

const role = (r: "owner" | "member" | "viewer") => (r === "owner" ? "an owner" : r === "viewer" ? "a viewer" : "a member");

export default function Invitation() {
  const { token, invite, me } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  const here = `/invites/${encodeURIComponent(token)}`;

  if (!invite) {
    return (
      <div className="mx-auto max-w-lg">
        <div className="card space-y-3">
          <h1 className="text-2xl font-semibold">This invitation link does not work</h1>
          <p>
            It was used already, the workspace owner revoked it, or it expired (invitations are valid for 7 days). Ask the person who invited you to send a new
            one.
          </p>
          <p>{me ? <Link to="/workspaces">Your workspaces</Link> : <Link to="/login">Sign in</Link>}</p>
        </div>
      </div>
    );
  }

  const name = invite.workspace.name ?? "a workspace";
  const mismatch = me !== null && me.toLowerCase() !== invite.email.toLowerCase();
  return (
    <div className="mx-auto max-w-lg">
      <div className="card space-y-4">
        <h1 className="text-2xl font-semibold">Join {name}</h1>
        <p>
          {invite.invited_by ? <strong>{invite.invited_by}</strong> : "Someone"} invited <strong className="break-all">{invite.email}</strong> to the workspace{" "}
          <strong>{name}</strong> as {role(invite.role)}. {invite.role === "owner" ? "Owners also manage its members and invitations." : null}
        </p>
        <p className="text-sm text-slate-600 dark:text-slate-400">
          {invite.role === "viewer"
            ? "Viewers see all of the workspace's links, linktrees, domains and analytics, and change none of them."
            : "Members see and edit all of the workspace's links, linktrees, domains and analytics."}{" "}
          This link is valid until {formatDateTime(invite.expires_at)}.
        </p>
        {data?.error ? (
          <FormAlert
            error={
              data.error.error === "INVITE_EMAIL_MISMATCH" && me
                ? { ...data.error, message: `This invitation is for ${invite.email}; you are signed in as ${me}.` }
                : data.error.error === "NOT_FOUND"
                  ? { ...data.error, message: "This invitation link no longer works: it was used, revoked, or it expired." }
                  : data.error
            }
          />
        ) : null}

        {me === null ? (
          <>
            <p>To accept, sign in as {invite.email}. We e-mail a 6-digit code to that address; new here, the same step makes your account.</p>
            {/* Posts to the sign-in page, which mails the code and brings the person back here afterwards. */}
            <Form method="post" action={`/login?redirectTo=${encodeURIComponent(here)}`}>
              <input type="hidden" name="email" value={invite.email} />
              <input type="hidden" name="redirectTo" value={here} />
              <button type="submit" className="btn-primary w-full sm:w-auto" disabled={busy}>
                Sign in as {invite.email}
              </button>
            </Form>
          </>
        ) : mismatch ? (
          <>
            <p role="alert" className="alert-error">
              This invitation is for {invite.email}; you are signed in as {me}. Sign out, then sign in as {invite.email} to accept it.
            </p>
            <Form method="post">
              <button type="submit" name="intent" value="signout" className="btn-primary">
                Sign out and continue as {invite.email}
              </button>
            </Form>
          </>
        ) : (
          <Form method="post" className="flex flex-wrap items-center gap-3">
            <button type="submit" name="intent" value="accept" className="btn-primary" disabled={busy}>
              Accept and join {name}
            </button>
            <Link to="/links">Not now</Link>
          </Form>
        )}
      </div>
    </div>
  );
}
