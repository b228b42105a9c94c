// The yardstick of GET /links: a bare node:http server answering one workspace's live links with one
// prepared postgres.js query per request, the rows mapped to the API's link shape and JSON.stringify.
// No auth, no framework: what the machine does at least for this answer.
// Args: port, database URL, workspace id, redirect base URL (http://host:port).
import http from "node:http";
import postgres from "postgres";

const [port, databaseUrl, workspaceId, redirectBase] = [Number(process.argv[2]), process.argv[3], process.argv[4], process.argv[5]];
const redirectDomain = new URL(redirectBase).host;
const sql = postgres(databaseUrl, { max: 4, prepare: true, onnotice: () => {} });

type Row = {
  id: string;
  slug: string;
  url: string;
  domain: string | null;
  tags: string[] | null;
  expires_at: string | null;
  expiration_url: string | null;
  targeting: unknown;
  has_password: boolean;
  og_title: string | null;
  og_description: string | null;
  og_image: string | null;
  created_at: string;
  updated_at: string;
  title: string | null;
  forward_query: boolean;
  variants: { url: string; weight: number }[] | null;
  archived: boolean;
};

const list = () => sql<Row[]>`
  select l.id, l.slug, l.url, d.name as domain, l.tags, l.expires_at, l.expiration_url, l.targeting,
         l.password_hash is not null as has_password, l.og_title, l.og_description, l.og_image,
         l.created_at, l.updated_at, l.title, l.forward_query, l.variants, l.archived_at is not null as archived
  from links l left join domains d on d.id = l.domain_id
  where l.workspace_id = ${workspaceId} and l.deleted_at is null and l.kind = 'link' and l.archived_at is null
  order by l.created_at desc, l.id desc`;

const num = (v: string | null) => (v === null ? null : Number(v));

http
  .createServer((_req, res) => {
    list().then(
      (rows) => {
        const body = JSON.stringify({
          links: rows.map((r) => ({
            id: r.id,
            slug: r.slug,
            url: r.url,
            short_url: r.domain ? `https://${r.domain}/${r.slug}` : `${redirectBase}/${r.slug}`,
            redirect_domain: r.domain ?? redirectDomain,
            tags: r.tags ?? [],
            expires_at: num(r.expires_at),
            expiration_url: r.expiration_url,
            targeting: r.targeting ?? null,
            has_password: r.has_password,
            og_title: r.og_title,
            og_description: r.og_description,
            og_image: r.og_image,
            created_at: Number(r.created_at),
            updated_at: Number(r.updated_at),
            deleted_at: null,
            ...(r.title !== null ? { title: r.title } : {}),
            ...(r.forward_query ? { forward_query: true } : {}),
            ...(r.variants ? { variants: r.variants } : {}),
            ...(r.archived ? { archived: true } : {}),
          })),
        });
        res.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) }).end(body);
      },
      (e) => res.writeHead(500).end(String(e)),
    );
  })
  .listen(port, "127.0.0.1", () => process.send?.("ready"));
