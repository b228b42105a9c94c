import { z } from "zod";
import { AppError } from "../../domain/errors";
import { isCrossSiteWrite } from "../../core/auth";
import { publicProcedure, router, sessionOnlyProcedure, contract } from "../../trpc/init";
import { accountOutput } from "../account";
import { startInput, verifyInput } from "./auth.schema";
import { logout, startSignIn, verifySignIn } from "./auth.service";

const TAG = "auth";

/** Sign-in from another site's page is refused too (login CSRF), like cookie-authenticated writes. */
const sameSiteProcedure = publicProcedure.use(({ ctx, next }) => {
  if (isCrossSiteWrite(ctx.app, ctx.req)) throw new AppError("FORBIDDEN");
  return next();
});

export const authRouter = router({
  start: sameSiteProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/auth/start",
        tags: [TAG],
        summary: "Start a sign-in",
        description: "Mails a 6-digit code, valid 10 minutes. Always 204 (no account oracle).",
        protect: false,
      },
      internal: true,
      successStatus: 204,
    })
    .input(startInput)
    .output(contract(z.void()))
    .mutation(async ({ ctx, input }) => {
      await startSignIn(ctx, input.email);
    }),

  verify: sameSiteProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/auth/verify",
        tags: [TAG],
        summary: "Finish a sign-in",
        description: "Checks the code; sets the app_session cookie. The first sign-in creates the account and its workspace.",
        protect: false,
      },
      internal: true,
    })
    .input(verifyInput)
    .output(contract(accountOutput))
    .mutation(({ ctx, input }) => verifySignIn(ctx, input.email, input.code)),

  logout: sessionOnlyProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/auth/logout",
        tags: [TAG],
        summary: "Sign out",
        description: "Ends the current session and clears the cookie.",
        protect: true,
      },
      internal: true,
      successStatus: 204,
      uncountedForSessions: true,
    })
    .input(z.object({}).optional())
    .output(contract(z.void()))
    .mutation(async ({ ctx }) => {
      await logout(ctx);
    }),
});
