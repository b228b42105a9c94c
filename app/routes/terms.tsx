import type { MetaFunction } from "@remix-run/node";

export const meta: MetaFunction = () => [{ title: "Terms of use · Links" }];

// The terms the API document's licence points to: what every user of this instance agrees to.
export default function Terms() {
  return (
    <article className="mx-auto max-w-2xl space-y-4">
      <h1 className="text-2xl font-semibold">Terms of use</h1>
      <p className="text-sm text-slate-600 dark:text-slate-400">
        This service and its API are run by the operator of this site. Using the dashboard, the API or a short link means accepting these terms.
      </p>
      <section aria-labelledby="acceptable-use" className="space-y-2">
        <h2 id="acceptable-use" className="text-lg font-semibold">
          Acceptable use
        </h2>
        <ul className="list-disc space-y-1 pl-5">
          <li>No short link, linktree page or share card may lead to phishing, malware, spam or fraud.</li>
          <li>
            Anyone may{" "}
            <a href="/report" className="underline">
              report a short link
            </a>
            ; a person reviews every report, and a link that breaks these terms is deleted.
          </li>
          <li>Do not try to get around rate limits, scopes or another workspace&apos;s boundaries.</li>
        </ul>
      </section>
      <section aria-labelledby="api" className="space-y-2">
        <h2 id="api" className="text-lg font-semibold">
          The API
        </h2>
        <ul className="list-disc space-y-1 pl-5">
          <li>An API token acts for the person who made it: keep it secret, and revoke it when it may have leaked.</li>
          <li>
            Each plan allows a number of token requests an hour; answers say how many remain (<code>RateLimit-*</code> headers).
          </li>
          <li>
            The API is described in its{" "}
            <a href="/docs" className="underline">
              reference
            </a>
            ; it is provided as it is, without warranty.
          </li>
        </ul>
      </section>
      <section aria-labelledby="data" className="space-y-2">
        <h2 id="data" className="text-lg font-semibold">
          Data
        </h2>
        <ul className="list-disc space-y-1 pl-5">
          <li>
            A visit to a short link is counted with its time, country, device, browser and referring site; never a name or an address that identifies a person.
          </li>
          <li>Deleting your account removes your links, tokens and sessions; the clicks they counted stay, without anything that names you.</li>
        </ul>
      </section>
    </article>
  );
}
