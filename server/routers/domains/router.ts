import { z } from "zod";
import { authedProcedure, router, runtimeChecks, type Meta, contract } from "../../trpc/init";
import { createDomainInput, domainIdInput, domainOutput, updateDomainInput } from "./domains.schema";
import { createDomain, createDomainChecks, listDomains, updateDomain, updateDomainChecks, verifyDomain } from "./domains.service";
import { deleteDomain } from "./delete-domain";

const TAG = "domains";
const api = (method: "GET" | "POST" | "PATCH" | "DELETE", path: `/${string}`, summary: string, description: string): Meta => ({
  openapi: { method, path, tags: [TAG], summary, description, protect: true },
});

/** Branded domains (docs/teams-and-domains.md): the public API, token or session. */
export const domainRouter = router({
  list: authedProcedure
    .meta({ scope: "domains:read" })
    .meta(api("GET", "/domains", "List domains", "Branded domains of the caller's workspace, by name."))
    .input(z.object({}))
    .output(contract(z.object({ domains: z.array(domainOutput) })))
    .query(async ({ ctx }) => ({ domains: await listDomains(ctx.app, ctx.actor) })),

  create: authedProcedure
    .meta({
      scope: "domains:write",
      ...api(
        "POST",
        "/domains",
        "Add a domain",
        "Adds a branded domain, unverified. `name` is a lower-case host name (an internationalised name as punycode, `xn--…`), at least two labels, at most 253 characters, " +
          "not an IP address and not one of this service's own hosts. Publish the TXT record of `verification`, then verify: a name belongs to the workspace that verifies it. " +
          "An unverified domain lapses 7 days after it was added (gone from the list, 404 by id), which frees its name. " +
          "409 DOMAIN_TAKEN: a workspace (this one or another) has the name, verified or not. 409 DOMAIN_LIMIT: the workspace already has 20 unverified domains.",
      ),
      successStatus: 201,
      errors: [409],
    })
    .use(runtimeChecks(createDomainInput, createDomainChecks))
    .input(createDomainInput)
    .output(contract(domainOutput))
    .mutation(({ ctx, input }) => createDomain(ctx.app, ctx.actor, input)),

  verify: authedProcedure
    .meta({
      scope: "domains:write",
      ...api(
        "POST",
        "/domains/{id}/verify",
        "Verify a domain",
        "Looks up the TXT record at `verification.name`: when one equals `verification.value`, the domain is verified and serves links from then on; otherwise `verified` stays false. A verified domain stays verified. " +
          "409 DOMAIN_TAKEN when another workspace verified the name first; 404 for a claim that lapsed (unverified 7 days after it was added).",
      ),
      errors: [409],
    })
    .input(domainIdInput)
    .output(contract(domainOutput))
    .mutation(({ ctx, input }) => verifyDomain(ctx.app, ctx.actor, input.id)),

  update: authedProcedure
    .meta({ scope: "domains:write", auditBefore: async (app, actor, input) => (await listDomains(app, actor)).find((d) => d.id === input.id) })
    .meta(
      api("PATCH", "/domains/{id}", "Update a domain", "`not_found_url`: where an unknown slug and `/` on the domain redirect (302); null answers 404 there."),
    )
    .use(runtimeChecks(updateDomainInput, updateDomainChecks))
    .input(updateDomainInput)
    .output(contract(domainOutput))
    .mutation(({ ctx, input }) => updateDomain(ctx.app, ctx.actor, input)),

  delete: authedProcedure
    .meta({
      scope: "domains:write",
      ...api(
        "DELETE",
        "/domains/{id}",
        "Remove a domain",
        "Removes the domain. While live links use it, 409 DOMAIN_IN_USE: delete, archive or move them first. Archived links on it are deleted with it.",
      ),
      successStatus: 204,
      errors: [409],
    })
    .input(domainIdInput)
    .output(contract(z.void()))
    .mutation(async ({ ctx, input }) => {
      await deleteDomain(ctx.app, ctx.actor, input.id);
    }),
});
