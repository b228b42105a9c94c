import { accountRouter } from "../routers/account/router";
import { analyticsRouter } from "../routers/analytics/router";
import { authRouter } from "../routers/auth/router";
import { linkRouter } from "../routers/links/router";
import { linktreeRouter } from "../routers/linktrees/router";
import { reportRouter } from "../routers/reports/router";
import { sessionRouter } from "../routers/sessions/router";
import { tokenRouter } from "../routers/tokens/router";
import { createCallerFactory, router } from "./init";

/** Singular keys: `links` collides with @trpc/client's reserved option (stack notes). */
export const appRouter = router({
  link: linkRouter,
  analytics: analyticsRouter,
  linktree: linktreeRouter,
  account: accountRouter,
  auth: authRouter,
  token: tokenRouter,
  session: sessionRouter,
  report: reportRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
