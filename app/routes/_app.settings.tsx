import type { MetaFunction } from "@remix-run/node";
import { NavLink, Outlet } from "@remix-run/react";
import { PageHeader } from "../components/ui";

export const meta: MetaFunction = () => [{ title: "Settings · Links" }];

const tab = ({ isActive }: { isActive: boolean }) =>
  `border-b-2 px-3 py-2 text-sm font-medium no-underline hover:no-underline ${isActive ? "border-indigo-600 text-slate-900 dark:text-white" : "border-transparent text-slate-600 hover:text-slate-900 dark:text-slate-400"}`;

export default function Settings() {
  return (
    <>
      <PageHeader title="Settings" />
      <nav aria-label="Settings" className="mb-6 flex gap-2 overflow-x-auto border-b border-slate-200 dark:border-slate-800">
        <NavLink to="/settings" end className={tab}>
          Account
        </NavLink>
        <NavLink to="/settings/tokens" className={tab}>
          API tokens
        </NavLink>
        <NavLink to="/settings/sessions" className={tab}>
          Sessions
        </NavLink>
        <NavLink to="/settings/audit" className={tab}>
          Audit log
        </NavLink>
      </nav>
      <Outlet />
    </>
  );
}
