/**
 * What a person typed or pasted as a domain, reduced to the host name it names: trimmed, a URL's
 * scheme, credentials, path, query and fragment dropped (`https://Links.Acme.test/x` is
 * `links.acme.test`), a lone trailing slash dropped, lower case. Anything else is left for
 * hostNameProblems to name (a port, an internationalised name not in punycode, a path without scheme).
 * Pure, so the dashboard's domain form and the domains service share it.
 */
export function hostNameFromInput(raw: string): string {
  let s = raw.trim();
  const scheme = /^(?:[a-z][a-z0-9+.-]*:)?\/\//i.exec(s);
  if (scheme) {
    s = s.slice(scheme[0].length).split(/[/?#]/)[0];
    s = s.slice(s.lastIndexOf("@") + 1);
  } else if (/^[^/?#]+\/$/.test(s)) s = s.slice(0, -1);
  return s.toLowerCase();
}
