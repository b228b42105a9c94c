import { accountRouter } from "./account/router";
import { analyticsRouter } from "./analytics/router";
import { authRouter } from "./auth/router";
import { domainRouter } from "./domains/router";
import { linkRouter } from "./links/router";
import { importRouter } from "./imports/router";
import { linktreeRouter } from "./linktrees/router";
import { reportRouter } from "./reports/router";
import { sessionRouter } from "./sessions/router";
import { tokenRouter } from "./tokens/router";
import { workspaceRouter } from "./workspaces/router";
import { webhookRouter } from "./webhooks/router";
import { auditRouter } from "./audit/router";
import { healthRouter } from "./health/router";
import { qrRouter } from "./qr/router";
import { createCallerFactory, router } from "../trpc/init";

/** Singular keys: `links` collides with @trpc/client's own `links` option (README, Naming). */
export const appRouter = router({
  link: linkRouter,
  imports: importRouter,
  analytics: analyticsRouter,
  linktree: linktreeRouter,
  account: accountRouter,
  auth: authRouter,
  token: tokenRouter,
  session: sessionRouter,
  report: reportRouter,
  workspace: workspaceRouter,
  domain: domainRouter,
  webhook: webhookRouter,
  audit: auditRouter,
  health: healthRouter,
  qr: qrRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
