import { z } from "zod";
import { AppError } from "../../domain/errors";
import { isCrossSiteWrite } from "../../core/auth";
import { publicProcedure, router, sessionOnlyProcedure, contract } from "../../trpc/init";
import { accountOutput } from "../account";
import { text } from "../../lib/input";
import { startInput, verifyInput } from "./auth.schema";
import { logout, startSignIn, verifySignIn } from "./auth.service";
import { finishOidcSignIn, startOidcSignIn } from "./oidc";

const TAG = "auth";

/** Sign-in from another site's page is refused too (login CSRF), like cookie-authenticated writes. */
const sameSiteProcedure = publicProcedure.use(({ ctx, next }) => {
  if (isCrossSiteWrite(ctx.app, ctx.req)) throw new AppError("FORBIDDEN");
  return next();
});

/** EMAIL_SIGNIN=off: sign-in by mailed code does not exist on this instance (404), only single sign-on. */
const emailSignInProcedure = sameSiteProcedure.use(({ ctx, next }) => {
  if (ctx.app.config.emailSignin === false) throw new AppError("NOT_FOUND");
  return next();
});

export const authRouter = router({
  start: emailSignInProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/auth/start",
        tags: [TAG],
        summary: "Start a sign-in",
        description:
          "Mails a 6-digit code, valid 10 minutes. Always 204 (no account oracle). With sign-ups off, only existing users and invited addresses get a code; " +
          "the answer is the same. With e-mail sign-in off: 404.",
        protect: false,
      },
      internal: true,
      successStatus: 204,
    })
    .input(startInput)
    .output(contract(z.void()))
    .mutation(async ({ ctx, input }) => {
      await startSignIn(ctx.app, input.email, ctx);
    }),

  verify: emailSignInProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/auth/verify",
        tags: [TAG],
        summary: "Finish a sign-in",
        description: "Checks the code; sets the app_session cookie. The first sign-in creates the account and its workspace. With e-mail sign-in off: 404.",
        protect: false,
      },
      internal: true,
    })
    .input(verifyInput)
    .output(contract(accountOutput))
    .mutation(({ ctx, input }) => verifySignIn(ctx.app, input, ctx)),

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
      await logout(ctx.app, (await ctx.auth()).actor, ctx);
    }),

  // Dashboard-only (no REST): the sign-in page's choices and the single sign-on flow, which the
  // dashboard's /auth/oidc/start and /auth/oidc/callback routes drive.

  /** Which ways to sign in this instance offers. */
  methods: publicProcedure
    .input(z.object({}).optional())
    .output(contract(z.object({ email: z.boolean(), oidc: z.object({ name: z.string() }).nullable() })))
    .query(({ ctx }) => {
      const { emailSignin, oidc } = ctx.app.config;
      return { email: emailSignin !== false, oidc: oidc ? { name: oidc.name } : null };
    }),

  oidcStart: publicProcedure
    .input(z.object({ redirect_to: text().max(2000) }).strict())
    .output(contract(z.object({ url: z.string() })))
    .mutation(({ ctx, input }) => startOidcSignIn(ctx.app, input.redirect_to, ctx)),

  oidcCallback: publicProcedure
    .input(z.object({ query: text().max(8000) }).strict())
    .output(contract(z.object({ account: accountOutput, redirect_to: z.string() })))
    .mutation(async ({ ctx, input }) => {
      const { account, redirectTo } = await finishOidcSignIn(ctx.app, input.query, ctx);
      return { account, redirect_to: redirectTo };
    }),
});
