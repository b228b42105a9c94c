import {
  Form,
  isRouteErrorResponse,
  Link,
  Links,
  Meta,
  NavLink,
  Outlet,
  Scripts,
  ScrollRestoration,
  useLocation,
  useRouteError,
  useRouteLoaderData,
} from "@remix-run/react";
import { useEffect, useRef, useState } from "react";
import type { LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import styles from "./tailwind.css";
import { useNonce } from "./lib/nonce";
import type { RootData, Viewer } from "./lib/env";

export const meta: MetaFunction = () => [{ title: "Links" }, { name: "description", content: "Short links, linktrees and click analytics." }];
export const links: LinksFunction = () => [
  { rel: "stylesheet", href: styles },
  { rel: "icon", href: "/favicon.svg", type: "image/svg+xml" },
];

export async function loader({ context }: LoaderFunctionArgs): Promise<RootData> {
  const { urls } = context;
  const env = { appUrl: urls.app, apiUrl: urls.api, redirectUrl: urls.redirect, redirectDomain: urls.redirectDomain };
  const { actor } = await context.auth();
  let viewer: Viewer | null = null;
  if (actor?.via === "session") {
    viewer = { id: actor.userId, email: "", name: null, avatarUrl: null, isAdmin: actor.isAdmin, plan: actor.plan };
    try {
      const account = await context.caller.account.get();
      viewer = { ...viewer, email: account.user.email, name: account.user.name, avatarUrl: account.user.avatar_url };
    } catch {
      // The header still works with what the session says.
    }
  }
  return { env, viewer };
}

/** The browser's time zone for the server (analytics days and hours are the viewer's); UTC without it. */
const TZ_SCRIPT = `try{document.cookie="tz="+encodeURIComponent(Intl.DateTimeFormat().resolvedOptions().timeZone)+";path=/;max-age=31536000;samesite=lax"}catch(e){}`;

export function Layout({ children }: { children: React.ReactNode }) {
  const nonce = useNonce();
  // Marks the page as hydrated once React has committed: until then a key or click may reach the
  // browser's own form handling, so browser tests (and anyone scripting the dashboard) wait for it.
  useEffect(() => {
    document.documentElement.dataset.hydrated = "true";
  }, []);
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content="light dark" />
        <Meta />
        <Links />
        <script nonce={nonce} suppressHydrationWarning dangerouslySetInnerHTML={{ __html: TZ_SCRIPT }} />
      </head>
      <body className="min-h-screen">
        <a
          href="#main"
          className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-50 focus:rounded focus:bg-white focus:p-2 dark:focus:bg-slate-900"
        >
          Skip to content
        </a>
        {children}
        <ScrollRestoration nonce={nonce} />
        <Scripts nonce={nonce} />
      </body>
    </html>
  );
}

const navClass = ({ isActive }: { isActive: boolean }) =>
  `rounded-md px-2 py-1 text-sm font-medium no-underline hover:no-underline ${isActive ? "bg-slate-200 text-slate-900 dark:bg-slate-800 dark:text-white" : "text-slate-700 hover:bg-slate-100 dark:text-slate-300 dark:hover:bg-slate-800"}`;

// The signed-in dashboard's sections, in the order of the menu.
const SECTIONS = [
  ["/links", "Links"],
  ["/analytics", "Analytics"],
  ["/linktrees", "Linktrees"],
  ["/domains", "Domains"],
  ["/webhooks", "Webhooks"],
  ["/settings", "Settings"],
] as const;

function NavItems({ viewer }: { viewer: Viewer | null }) {
  return viewer ? (
    <>
      {SECTIONS.map(([to, label]) => (
        <NavLink key={to} to={to} className={navClass}>
          {label}
        </NavLink>
      ))}
      {viewer.isAdmin ? (
        <NavLink to="/admin/reports" className={navClass}>
          Reports
        </NavLink>
      ) : null}
    </>
  ) : (
    <>
      <NavLink to="/docs" reloadDocument className={navClass}>
        API
      </NavLink>
      <NavLink to="/report" className={navClass}>
        Report abuse
      </NavLink>
    </>
  );
}

function Account({ viewer }: { viewer: Viewer | null }) {
  return viewer ? (
    <div className="flex min-w-0 items-center gap-2">
      {viewer.avatarUrl ? <img src={viewer.avatarUrl} alt="" width={28} height={28} className="h-7 w-7 rounded-full object-cover" /> : null}
      <span className="min-w-0 max-w-[14rem] truncate text-sm text-slate-700 dark:text-slate-300">{viewer.name || viewer.email}</span>
      <Form method="post" action="/logout" className="shrink-0">
        <button type="submit" className="btn-ghost">
          Sign out
        </button>
      </Form>
    </div>
  ) : (
    <Link to="/login" className="btn-primary">
      Sign in
    </Link>
  );
}

/**
 * At phone width the navigation folds into a menu: a <details> disclosure, so it opens without
 * JavaScript too; once hydrated, the summary says whether it is open (aria-expanded) and a page
 * change closes it.
 */
function PhoneMenu({ viewer }: { viewer: Viewer | null }) {
  const ref = useRef<HTMLDetailsElement>(null);
  const [open, setOpen] = useState(false);
  const { key } = useLocation();
  useEffect(() => {
    if (ref.current) ref.current.open = false;
  }, [key]);
  return (
    <details ref={ref} className="relative ml-auto md:hidden" onToggle={(e) => setOpen(e.currentTarget.open)} data-testid="phone-menu">
      <summary className="btn-secondary cursor-pointer list-none [&::-webkit-details-marker]:hidden" aria-expanded={open} aria-controls="phone-nav">
        <span aria-hidden="true">☰</span> Menu
      </summary>
      <div
        id="phone-nav"
        className="absolute right-0 z-40 mt-2 flex w-64 flex-col gap-3 rounded-lg border border-slate-200 bg-white p-3 shadow-lg dark:border-slate-700 dark:bg-slate-900"
      >
        <nav aria-label="Main" className="flex flex-col gap-1">
          <NavItems viewer={viewer} />
        </nav>
        <Account viewer={viewer} />
      </div>
    </details>
  );
}

function Header({ viewer }: { viewer: Viewer | null }) {
  return (
    <header className="border-b border-slate-200 bg-white dark:border-slate-800 dark:bg-slate-900">
      <div className="mx-auto flex max-w-6xl items-center gap-x-4 gap-y-2 px-4 py-3">
        <Link to={viewer ? "/links" : "/"} className="mr-2 text-lg font-bold text-slate-900 no-underline dark:text-white">
          <img src="/favicon.svg" alt="" width={24} height={24} className="mr-1 inline-block h-6 w-6 align-[-5px]" /> Links
        </Link>
        <nav aria-label="Main" className="hidden flex-1 flex-wrap items-center gap-1 md:flex">
          <NavItems viewer={viewer} />
        </nav>
        <div className="hidden md:block">
          <Account viewer={viewer} />
        </div>
        <PhoneMenu viewer={viewer} />
      </div>
    </header>
  );
}

function Footer() {
  return (
    <footer className="mx-auto max-w-6xl px-4 py-8 text-sm text-slate-500 dark:text-slate-400">
      <nav aria-label="Footer" className="flex flex-wrap gap-4">
        <Link to="/docs" reloadDocument>
          API reference
        </Link>
        <Link to="/report">Report abuse</Link>
        <Link to="/terms">Terms of use</Link>
        {/* The IPv6 country data's licence (CC BY 4.0) asks for this link where its results show. */}
        <a href="https://db-ip.com">IP Geolocation by DB-IP</a>
      </nav>
    </footer>
  );
}

export default function App() {
  const data = useRouteLoaderData<typeof loader>("root");
  return (
    <>
      <Header viewer={data?.viewer ?? null} />
      <main id="main" className="mx-auto max-w-6xl px-4 py-6 sm:py-8">
        <Outlet />
      </main>
      <Footer />
    </>
  );
}

export function ErrorBoundary() {
  const error = useRouteError();
  // The header and footer stay when the root's own data is there (a page's loader failed, not the root's):
  // a wrong address or a refused filter leaves the way back in the menu.
  const data = useRouteLoaderData<typeof loader>("root");
  const status = isRouteErrorResponse(error) ? error.status : 500;
  const text = isRouteErrorResponse(error) ? (typeof error.data === "string" ? error.data : error.statusText) : "Something went wrong.";
  return (
    <>
      <Header viewer={data?.viewer ?? null} />
      <ErrorPage status={status} text={text} />
      <Footer />
    </>
  );
}

function ErrorPage({ status, text }: { status: number; text: string }) {
  return (
    <main id="main" className="mx-auto max-w-xl px-4 py-16 text-center">
      <h1 className="text-3xl font-semibold">{status === 404 ? "Not found" : status === 503 ? "Briefly unavailable" : `Error ${status}`}</h1>
      <p className="mt-3 text-slate-600 dark:text-slate-400">{status === 404 ? "This page does not exist, or it is not yours." : text}</p>
      <p className="mt-6">
        <Link to="/" className="btn-secondary">
          Home
        </Link>
      </p>
    </main>
  );
}
