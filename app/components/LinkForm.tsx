import { Form, useNavigation } from "@remix-run/react";
import { useEffect, useState, type FocusEvent } from "react";
import type { LinkDto } from "../../server/routers/links/links.schema";
import { useEnv } from "../lib/env";
import { browserOffset, expiryFromLocal, localInputOf, parseTags, UTM_KEYS, withScheme, withUtm, type LinkFormValues, type UtmKey } from "../lib/link-form";
import type { FormError } from "../lib/messages";
import { trpc, errorCode } from "../lib/trpc.client";
import { CountrySelect } from "./CountrySelect";
import { Field, FieldErrors, fieldErrors, FormAlert } from "./ui";

const SLUG_RE = /^[0-9a-z-]{1,50}$/;

/**
 * An address field: text rather than type="url", so `example.com/x` is not refused by the browser
 * but gets its https:// when the field is left (and on the server, for forms sent without JavaScript).
 */
const urlInput = { type: "text", inputMode: "url", autoCapitalize: "none", spellCheck: false } as const;
/** Leaving an uncontrolled address field shows it as it will be saved. */
const schemeOnBlur = (e: FocusEvent<HTMLInputElement>) => {
  e.currentTarget.value = withScheme(e.currentTarget.value);
};

/** `domains`: names of the workspace's verified branded domains, for the domain picker (none: no picker). */
type Props = { link: LinkDto | null; values: LinkFormValues; error?: FormError | null; submitLabel: string; domains?: string[] };

export function LinkForm({ link, values, error, submitLabel, domains = [] }: Props) {
  const busy = useNavigation().state === "submitting";
  const { redirectDomain } = useEnv();
  // A link's own domain: its redirect_domain, unless that is the default one.
  const [domain, setDomain] = useState(values.domain ?? (link && link.redirect_domain !== redirectDomain ? link.redirect_domain : ""));
  const [url, setUrl] = useState(values.url);
  const [utm, setUtm] = useState(values.utm);
  const [og, setOg] = useState({ title: values.og_title, description: values.og_description, image: values.og_image });
  const errs = (...n: string[]) => fieldErrors(error, ...n);
  return (
    <Form method="post" className="space-y-6" aria-describedby="link-form-errors">
      <div id="link-form-errors">
        <FormAlert error={error} />
      </div>
      <section className="card space-y-4" aria-labelledby="s-dest">
        <h2 id="s-dest" className="text-lg font-semibold">
          Destination
        </h2>
        <Field
          label="Destination URL"
          name="url"
          {...urlInput}
          required
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          onBlur={() => setUrl(withScheme(url))}
          placeholder="https://example.com/page"
          errors={errs("url")}
          hint="https:// is added when you leave it out."
        />
        <Field
          label="Title"
          name="title"
          maxLength={200}
          defaultValue={values.title}
          errors={errs("title")}
          hint="Optional. A name for this link in your list and search; visitors never see it (the share card has its own title)."
        />
        {domains.length || domain ? <DomainPicker domains={domains} value={domain} onChange={setDomain} errors={errs("domain")} /> : null}
        <SlugField
          initial={values.slug}
          current={link && domain === (link.redirect_domain !== redirectDomain ? link.redirect_domain : "") ? link.slug : null}
          domain={domain}
          errors={errs("slug")}
        />
        <Field
          label="Tags"
          name="tags"
          defaultValue={values.tags}
          placeholder="launch, newsletter"
          errors={errs("tags")}
          onBlur={(e) => (e.currentTarget.value = parseTags(e.currentTarget.value).join(", "))}
          hint='Separated by commas; up to 10. Written in a-z, 0-9 and - as you leave the field: "Q4 Push" becomes q4-push.'
        />
        <UtmBuilder
          url={url}
          utm={utm}
          setUtm={setUtm}
          onApply={(u) => (setUrl(u), setUtm(Object.fromEntries(UTM_KEYS.map((k) => [k, ""])) as Record<UtmKey, string>))}
        />
      </section>

      <section className="card space-y-4" aria-labelledby="s-exp">
        <h2 id="s-exp" className="text-lg font-semibold">
          Expiry
        </h2>
        <ExpiryField values={values} errors={errs("expires_at")} />
        <Field
          label="Fallback URL after expiry"
          name="expiration_url"
          {...urlInput}
          onBlur={schemeOnBlur}
          defaultValue={values.expiration_url}
          errors={errs("expiration_url")}
          hint="Optional. Without it, an expired link answers 404."
        />
      </section>

      <TargetingEditor values={values} errors={errs("targeting")} />

      <VariantsEditor values={values} errors={errs("variants")} />

      <section className="card space-y-4" aria-labelledby="s-visits">
        <h2 id="s-visits" className="text-lg font-semibold">
          Visits
        </h2>
        <Checkbox
          name="forward_query"
          label="Pass the visitor's query string on to the destination"
          defaultChecked={values.forward_query}
          errors={errs("forward_query")}
          hint="For example ?utm_source=ad on the short link is added to the destination. A parameter the destination already has keeps its own value."
        />
        {link ? (
          <Checkbox
            name="archived"
            label="Archived"
            defaultChecked={values.archived}
            errors={errs("archived")}
            hint="An archived link stops redirecting (visitors see “not found”) but keeps its slug, clicks and analytics. Untick to put it back."
          />
        ) : null}
      </section>

      <section className="card space-y-4" aria-labelledby="s-pw">
        <h2 id="s-pw" className="text-lg font-semibold">
          Password
        </h2>
        <Field
          label={link?.has_password ? "New password" : "Password"}
          name="password"
          type="password"
          autoComplete="new-password"
          minLength={4}
          maxLength={200}
          errors={errs("password")}
          hint={
            link?.has_password ? "A password is set. Leave empty to keep it." : "Optional, 4-200 characters. Visitors must enter it before they are redirected."
          }
        />
        {link?.has_password ? (
          <div className="flex items-center gap-2">
            <input id="password_clear" name="password_clear" type="checkbox" className="h-4 w-4" defaultChecked={values.password_clear} />
            <label htmlFor="password_clear" className="text-sm">
              Remove the password
            </label>
          </div>
        ) : null}
      </section>

      <section className="card" aria-labelledby="s-og">
        <h2 id="s-og" className="text-lg font-semibold">
          Share card
        </h2>
        <p className="hint">What social networks show when the short link is shared.</p>
        <div className="mt-4 grid gap-6 lg:grid-cols-2">
          <div className="space-y-4">
            <Field
              label="Card title"
              name="og_title"
              maxLength={120}
              value={og.title}
              onChange={(e) => setOg({ ...og, title: e.target.value })}
              errors={errs("og_title")}
              hint={`${og.title.length}/120`}
            />
            <Field label="Description" name="og_description" errors={errs("og_description")} hint={`${og.description.length}/240`}>
              {({ id, describedBy, invalid }) => (
                <textarea
                  id={id}
                  name="og_description"
                  rows={3}
                  maxLength={240}
                  className="input"
                  value={og.description}
                  onChange={(e) => setOg({ ...og, description: e.target.value })}
                  aria-invalid={invalid || undefined}
                  aria-describedby={describedBy}
                />
              )}
            </Field>
            <Field
              label="Image URL"
              name="og_image"
              {...urlInput}
              value={og.image}
              onChange={(e) => setOg({ ...og, image: e.target.value })}
              onBlur={() => setOg({ ...og, image: withScheme(og.image) })}
              errors={errs("og_image")}
              hint="Optional, 1200×630 recommended. Without it an image is generated from the title."
            />
          </div>
          <SharePreview link={link} og={og} domain={domain} />
        </div>
      </section>

      <div className="flex flex-wrap gap-3">
        <button type="submit" name="intent" value="save" className="btn-primary" disabled={busy}>
          {busy ? "Saving…" : submitLabel}
        </button>
      </div>
    </Form>
  );
}

/** Which domain the short link is on: the default redirect domain or a verified branded one. */
function DomainPicker({ domains, value, onChange, errors }: { domains: string[]; value: string; onChange: (d: string) => void; errors: string[] }) {
  const { redirectDomain } = useEnv();
  const options = value && !domains.includes(value) ? [value, ...domains] : domains;
  return (
    <Field label="Domain" name="domain" errors={errors} hint="Your own domains appear here once they are verified on the Domains page.">
      {({ id, describedBy, invalid }) => (
        <select
          id={id}
          name="domain"
          className="input sm:max-w-md"
          value={value}
          onChange={(e) => onChange(e.target.value)}
          aria-invalid={invalid || undefined}
          aria-describedby={describedBy}
        >
          <option value="">{redirectDomain} (default)</option>
          {options.map((d) => (
            <option key={d} value={d}>
              {d}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** Custom slug with availability feedback from link.slugAvailable (on the chosen domain) while typing. */
function SlugField({ initial, current, domain, errors }: { initial: string; current: string | null; domain: string; errors: string[] }) {
  const { apiUrl, redirectUrl } = useEnv();
  const [slug, setSlug] = useState(initial);
  const [status, setStatus] = useState<{ kind: "idle" | "checking" | "free" | "taken" | "invalid" | "error"; slug: string }>({ kind: "idle", slug: "" });
  useEffect(() => {
    if (!slug || slug === current) return setStatus({ kind: "idle", slug });
    if (!SLUG_RE.test(slug)) return setStatus({ kind: "invalid", slug });
    setStatus({ kind: "checking", slug });
    let live = true;
    const timer = setTimeout(() => {
      trpc(apiUrl)
        .link.slugAvailable.query(domain ? { slug, domain } : { slug })
        .then((r) => live && setStatus({ kind: r.available ? "free" : "taken", slug }))
        .catch((e) => live && setStatus({ kind: errorCode(e) === "INVALID_LINK_ID" ? "invalid" : "error", slug }));
    }, 300);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [slug, current, apiUrl, domain]);
  const text = {
    idle: current ? "" : "Leave empty for a generated 4-character slug.",
    checking: "Checking…",
    free: `✓ ${slug} is available`,
    taken: `✗ ${slug} is taken`,
    invalid: "Use 1-50 characters of a-z, 0-9 and -.",
    error: "Could not check right now; saving will tell.",
  }[status.kind];
  const color =
    status.kind === "free"
      ? "text-emerald-700 dark:text-emerald-400"
      : status.kind === "taken" || status.kind === "invalid"
        ? "text-red-700 dark:text-red-400"
        : "text-slate-500 dark:text-slate-400";
  return (
    <Field label="Custom slug" name="slug" errors={errors}>
      {({ id, describedBy, invalid }) => (
        <>
          <div className="flex items-stretch">
            <span className="hidden items-center rounded-l-md border border-r-0 border-slate-300 bg-slate-100 px-2 text-sm text-slate-600 dark:border-slate-700 dark:bg-slate-800 dark:text-slate-300 sm:flex">
              {domain || redirectUrl.replace(/^https?:\/\//, "")}/
            </span>
            <input
              id={id}
              name="slug"
              className="input sm:rounded-l-none"
              value={slug}
              onChange={(e) => setSlug(e.target.value.toLowerCase())}
              pattern="[0-9a-z\-]{1,50}"
              maxLength={50}
              autoCapitalize="none"
              spellCheck={false}
              aria-invalid={invalid || status.kind === "taken" || undefined}
              aria-describedby={[describedBy, `${id}-status`].filter(Boolean).join(" ")}
            />
          </div>
          <p id={`${id}-status`} aria-live="polite" className={`mt-1 min-h-[1rem] text-xs ${color}`} data-testid="slug-status">
            {text}
          </p>
        </>
      )}
    </Field>
  );
}

/** False until the page has hydrated in the browser: until then, render what the server rendered. */
let hydratedOnce = false;
const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || "your time zone";
/** The form's (wall time, offset) as wall time in this browser's zone: values are UTC from the server, or this browser's own after a failed save. */
function browserLocal(values: LinkFormValues): string {
  const ms = expiryFromLocal(values.expires_at_local, values.tz_offset);
  return ms === null || Number.isNaN(ms) ? values.expires_at_local : localInputOf(ms);
}

/**
 * datetime-local in the browser's zone. The server cannot know that zone: it renders the value in
 * UTC without a tz_offset field, so a form sent without JavaScript is read as UTC (the hint says
 * so). Once hydrated, the value is shown in local time and tz_offset carries the offset of the
 * date in the field, so the server reads the instant the browser shows.
 */
function ExpiryField({ values, errors }: { values: LinkFormValues; errors: string[] }) {
  // The first render must match the server's (UTC); a form mounted later (after a save) starts local.
  const [zone, setZone] = useState(() => (hydratedOnce ? browserZone() : null));
  const [local, setLocal] = useState(() => (hydratedOnce ? browserLocal(values) : values.expires_at_local));
  useEffect(() => {
    hydratedOnce = true;
    if (zone) return;
    setLocal(browserLocal(values));
    setZone(browserZone());
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  const hint = zone
    ? `Optional. In ${zone}. Clear it to remove the expiry.`
    : "Optional. In UTC (your own time zone needs JavaScript). Clear it to remove the expiry.";
  return (
    <Field label="Expires at" name="expires_at_local" errors={errors} hint={hint}>
      {({ id, describedBy, invalid }) => (
        <>
          <input
            id={id}
            name="expires_at_local"
            type="datetime-local"
            className="input sm:max-w-xs"
            value={local}
            onChange={(e) => setLocal(e.target.value)}
            aria-invalid={invalid || undefined}
            aria-describedby={describedBy}
          />
          {zone ? <input type="hidden" name="tz_offset" value={browserOffset(local)} /> : null}
        </>
      )}
    </Field>
  );
}

function UtmBuilder({
  url,
  utm,
  setUtm,
  onApply,
}: {
  url: string;
  utm: Record<UtmKey, string>;
  setUtm: (u: Record<UtmKey, string>) => void;
  onApply: (url: string) => void;
}) {
  const result = withUtm(url, utm);
  const any = UTM_KEYS.some((k) => utm[k]);
  return (
    <details className="rounded-md border border-slate-200 p-3 dark:border-slate-800" open={any}>
      <summary className="cursor-pointer text-sm font-medium">UTM builder</summary>
      <p className="hint">Campaign parameters are written into the destination URL when you save (or press Apply).</p>
      <div className="mt-3 grid gap-3 sm:grid-cols-2 lg:grid-cols-3">
        {UTM_KEYS.map((k) => (
          <Field key={k} label={k.replace("utm_", "utm ")} name={k} value={utm[k]} onChange={(e) => setUtm({ ...utm, [k]: e.target.value })} />
        ))}
      </div>
      <p className="mt-3 break-all text-xs text-slate-600 dark:text-slate-400" aria-live="polite">
        Result: <span className="font-mono">{result || "—"}</span>
      </p>
      <button type="button" className="btn-secondary mt-2" disabled={!any || result === url} onClick={() => onApply(result)}>
        Apply to URL
      </button>
    </details>
  );
}

function TargetingEditor({ values, errors }: { values: LinkFormValues; errors: string[] }) {
  const [rows, setRows] = useState(() => [...values.geo, { country: "", url: "" }]);
  const update = (i: number, patch: Partial<{ country: string; url: string }>) => setRows(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const [langs, setLangs] = useState(() => [...values.languages, { language: "", url: "" }]);
  const updateLang = (i: number, patch: Partial<{ language: string; url: string }>) => setLangs(langs.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <section className="card space-y-4" aria-labelledby="s-target">
      <h2 id="s-target" className="text-lg font-semibold">
        Targeting
      </h2>
      <p className="hint !mt-0">Send visitors elsewhere by system, country or language. The system rule comes first, then the country, then the language.</p>
      <div className="grid gap-4 sm:grid-cols-2">
        <Field label="iOS / iPadOS destination" name="ios" {...urlInput} onBlur={schemeOnBlur} defaultValue={values.ios} />
        <Field label="Android destination" name="android" {...urlInput} onBlur={schemeOnBlur} defaultValue={values.android} />
      </div>
      <fieldset>
        <legend className="label">Countries</legend>
        <ul className="space-y-2">
          {rows.map((r, i) => (
            <li key={i} className="flex flex-col gap-2 sm:flex-row">
              <CountrySelect name="geo_country" aria-label={`Country ${i + 1}`} value={r.country} onChange={(e) => update(i, { country: e.target.value })} />
              <input
                name="geo_url"
                {...urlInput}
                className="input"
                aria-label={`Destination for country ${i + 1}`}
                placeholder="https://example.com/local"
                value={r.url}
                onChange={(e) => update(i, { url: e.target.value })}
                onBlur={() => update(i, { url: withScheme(r.url) })}
              />
              <button
                type="button"
                className="btn-ghost"
                aria-label={`Remove country ${i + 1}`}
                onClick={() => setRows(rows.length > 1 ? rows.filter((_, j) => j !== i) : [{ country: "", url: "" }])}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
        <button type="button" className="btn-secondary mt-2" disabled={rows.length >= 50} onClick={() => setRows([...rows, { country: "", url: "" }])}>
          Add country
        </button>
        <p className="hint">Up to 50 countries.</p>
      </fieldset>
      <fieldset>
        <legend className="label">Languages</legend>
        <ul className="space-y-2">
          {langs.map((r, i) => (
            <li key={i} className="flex flex-col gap-2 sm:flex-row">
              <input
                name="lang_code"
                className="input sm:max-w-[8rem]"
                aria-label={`Language code ${i + 1}`}
                placeholder="de"
                maxLength={3}
                autoCapitalize="none"
                spellCheck={false}
                value={r.language}
                onChange={(e) => updateLang(i, { language: e.target.value.toLowerCase() })}
              />
              <input
                name="lang_url"
                {...urlInput}
                className="input"
                aria-label={`Destination for language ${i + 1}`}
                placeholder="https://example.com/de"
                value={r.url}
                onChange={(e) => updateLang(i, { url: e.target.value })}
                onBlur={() => updateLang(i, { url: withScheme(r.url) })}
              />
              <button
                type="button"
                className="btn-ghost"
                aria-label={`Remove language ${i + 1}`}
                onClick={() => setLangs(langs.length > 1 ? langs.filter((_, j) => j !== i) : [{ language: "", url: "" }])}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
        <button type="button" className="btn-secondary mt-2" disabled={langs.length >= 20} onClick={() => setLangs([...langs, { language: "", url: "" }])}>
          Add language
        </button>
        <p className="hint">Up to 20, by two- or three-letter code (de, pt, es). The visitor&apos;s browser languages are tried in its order of preference.</p>
      </fieldset>
      <FieldErrors errors={errors} />
    </section>
  );
}

/** A labelled checkbox with its hint and errors tied to it. */
function Checkbox({ name, label, hint, errors, defaultChecked }: { name: string; label: string; hint: string; errors: string[]; defaultChecked: boolean }) {
  const id = `f-${name}`;
  return (
    <div>
      <div className="flex items-center gap-2">
        <input
          id={id}
          name={name}
          type="checkbox"
          className="h-4 w-4"
          defaultChecked={defaultChecked}
          aria-describedby={`${id}-hint`}
          aria-invalid={errors.length ? true : undefined}
        />
        <label htmlFor={id} className="text-sm font-medium">
          {label}
        </label>
      </div>
      <p id={`${id}-hint`} className="hint">
        {hint}
      </p>
      <FieldErrors errors={errors} />
    </div>
  );
}

const MAX_VARIANTS = 5;

/** A/B test: 2-5 destinations with weights summing to 100; the destination URL must be one of them. */
function VariantsEditor({ values, errors }: { values: LinkFormValues; errors: string[] }) {
  const [rows, setRows] = useState(() => (values.variants.length ? values.variants : []));
  const update = (i: number, patch: Partial<{ url: string; weight: string }>) => setRows(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const sum = rows.reduce((n, r) => n + (Number(r.weight) || 0), 0);
  return (
    <section className="card space-y-4" aria-labelledby="s-ab">
      <h2 id="s-ab" className="text-lg font-semibold">
        A/B test
      </h2>
      <p className="hint !mt-0">
        Split the visitors that no targeting rule catches between 2 to 5 destinations. Each visitor keeps the same one all day. Weights are percentages that add
        up to 100, and the destination URL above must be one of them.
      </p>
      {rows.length ? (
        <fieldset>
          <legend className="label">Variants</legend>
          <ul className="space-y-2">
            {rows.map((r, i) => (
              <li key={i} className="flex flex-col gap-2 sm:flex-row">
                <input
                  name="variant_url"
                  {...urlInput}
                  className="input"
                  aria-label={`Destination of variant ${i + 1}`}
                  placeholder="https://example.com/b"
                  value={r.url}
                  onChange={(e) => update(i, { url: e.target.value })}
                  onBlur={() => update(i, { url: withScheme(r.url) })}
                />
                <input
                  name="variant_weight"
                  type="number"
                  inputMode="numeric"
                  min={1}
                  max={100}
                  className="input sm:max-w-[7rem]"
                  aria-label={`Weight of variant ${i + 1} (percent)`}
                  value={r.weight}
                  onChange={(e) => update(i, { weight: e.target.value })}
                />
                <button type="button" className="btn-ghost" aria-label={`Remove variant ${i + 1}`} onClick={() => setRows(rows.filter((_, j) => j !== i))}>
                  Remove
                </button>
              </li>
            ))}
          </ul>
          <p className="hint" aria-live="polite">
            Weights add up to {sum} of 100.
          </p>
        </fieldset>
      ) : null}
      <button
        type="button"
        className="btn-secondary"
        disabled={rows.length >= MAX_VARIANTS}
        onClick={() =>
          setRows(
            rows.length
              ? [...rows, { url: "", weight: "" }]
              : [
                  { url: values.url, weight: "50" },
                  { url: "", weight: "50" },
                ],
          )
        }
      >
        {rows.length ? "Add variant" : "Start an A/B test"}
      </button>
      <FieldErrors errors={errors} />
    </section>
  );
}

/** A live share card: what a social network shows, with the generated image when no image is set. */
function SharePreview({ link, og, domain }: { link: LinkDto | null; og: { title: string; description: string; image: string }; domain: string }) {
  const { redirectUrl, redirectDomain } = useEnv();
  const generated = link && link.og_title ? `${redirectUrl}/_/og/${link.id}.png?v=${link.updated_at}` : null;
  const image = og.image && /^https?:\/\/./.test(og.image) ? og.image : og.title && generated && og.title === link?.og_title ? generated : null;
  return (
    <figure
      aria-label="Share card preview"
      className="self-start overflow-hidden rounded-lg border border-slate-200 bg-white dark:border-slate-700 dark:bg-slate-950"
    >
      <div className="relative aspect-[1200/630] w-full bg-gradient-to-br from-indigo-600 to-fuchsia-600">
        {image ? (
          <img src={image} alt="" className="absolute inset-0 h-full w-full object-cover" data-testid="og-image" />
        ) : (
          <div className="absolute inset-0 flex items-center justify-center p-6 text-center text-xl font-bold text-white">{og.title || "Your title here"}</div>
        )}
      </div>
      <figcaption className="space-y-1 p-3">
        <p className="text-xs uppercase text-slate-500">{domain || redirectDomain}</p>
        <p className="line-clamp-2 font-semibold">{og.title || "No title: the card is not shown"}</p>
        <p className="line-clamp-2 text-sm text-slate-600 dark:text-slate-400">{og.description}</p>
        {!og.image && og.title && og.title !== link?.og_title ? (
          <p className="text-xs text-slate-500">The image is generated from the title when you save.</p>
        ) : null}
      </figcaption>
    </figure>
  );
}
