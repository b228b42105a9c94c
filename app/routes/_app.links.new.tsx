import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Link, useActionData, useLoaderData } from "@remix-run/react";
import { LinkForm } from "../components/LinkForm";
import { PageHeader } from "../components/ui";
import { attempt, load } from "../lib/errors.server";
import { createInputFrom } from "../lib/link-form.server";
import { valuesFromLink } from "../lib/link-form";
import { requireActor } from "../lib/session.server";
import type { CreateLinkInput } from "../../server/routers/links/links.schema";

export const meta: MetaFunction = () => [{ title: "New link · Links" }];

export async function loader({ context, request }: LoaderFunctionArgs) {
  await requireActor(context, request);
  // The domain picker's choices: the workspace's verified branded domains.
  const { domains } = await load(request, () => context.caller.domain.list({}));
  return { domains: domains.filter((d) => d.verified).map((d) => d.name) };
}

export async function action({ context, request }: ActionFunctionArgs) {
  await requireActor(context, request);
  const { values, input } = createInputFrom(await request.formData());
  const r = await attempt(request, () => context.caller.link.create(input as CreateLinkInput));
  if (!r.ok) return { error: r.error, values };
  throw redirect(`/links/${r.value.id}?created=1`);
}

export default function NewLink() {
  const data = useActionData<typeof action>();
  const { domains } = useLoaderData<typeof loader>();
  return (
    <>
      <PageHeader title="New link" subtitle={<Link to="/links">← All links</Link>} />
      <LinkForm link={null} values={data?.values ?? valuesFromLink(null)} error={data?.error} submitLabel="Create link" domains={domains} />
    </>
  );
}
