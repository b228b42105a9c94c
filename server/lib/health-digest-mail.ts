import { escapeHtml, inertName, type Mail } from "./mail";

export type BrokenLinkLine = {
  /** The link's title, else its slug. */
  label: string;
  /** The destination that failed (typed by a member: shown inert, never as a link). */
  destination: string;
  /** Why it failed, as the check recorded it (`HTTP 404`, `timeout`, …). */
  reason: string | null;
  /** The link's page in the dashboard. */
  pageUrl: string;
};

/**
 * To a workspace's owners, at most once a day: the links that turned broken since the last digest.
 * The subject holds only a count; labels and destinations were typed by members, so they are made
 * inert (`inertName`) and, in the HTML part, escaped. `more`: broken links left out of a long list.
 */
export function healthDigestMail(to: string, opts: { workspace: string; links: BrokenLinkLine[]; more: number; linksUrl: string }): Mail {
  const workspace = inertName(opts.workspace);
  const n = opts.links.length + opts.more;
  const subject = n === 1 ? "1 link stopped working" : `${n} links stopped working`;
  const line = (l: BrokenLinkLine) => ({
    label: inertName(l.label),
    destination: inertName(l.destination),
    reason: l.reason ? inertName(l.reason) : "failed twice in a row",
  });
  const more = opts.more > 0 ? `…and ${opts.more} more.` : "";
  const footer = "Each link's destinations are checked about once a day; a link counts as broken after two failed checks in a row.";
  const text =
    `${n === 1 ? "A link" : `${n} links`} of the workspace “${workspace}” stopped working since the last report:\n\n` +
    opts.links
      .map((l) => {
        const s = line(l);
        return `- “${s.label}” → ${s.destination} (${s.reason})\n  ${l.pageUrl}\n`;
      })
      .join("") +
    (more ? `${more}\n` : "") +
    `\nAll links: ${opts.linksUrl}\n\n${footer}\n`;
  const html =
    `<p>${n === 1 ? "A link" : `${n} links`} of the workspace “${escapeHtml(workspace)}” stopped working since the last report:</p>` +
    `<ul>` +
    opts.links
      .map((l) => {
        const s = line(l);
        return `<li><a href="${escapeHtml(l.pageUrl)}">“${escapeHtml(s.label)}”</a> → ${escapeHtml(s.destination)} (${escapeHtml(s.reason)})</li>`;
      })
      .join("") +
    `</ul>` +
    (more ? `<p>${more}</p>` : "") +
    `<p><a href="${escapeHtml(opts.linksUrl)}">All links</a></p>` +
    `<p>${footer}</p>`;
  return { to, subject, text, html };
}
