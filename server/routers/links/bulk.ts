import { z } from "zod";
import { AppError, isDatabaseUnavailable, toPublicError, type Fields } from "../../domain/errors";
import { body, isObject, withRuntimeIssues } from "../../lib/input";
import type { AppServices } from "../../core/services";
import type { Actor, RequestInfo } from "../../trpc/context";
import { createLinkInput, linkOutput, type CreateLinkInput, type LinkDto } from "./links.schema";
import { createLink } from "./links.service";
import { createLinkChecks } from "./runtime-checks";

export const BULK_MAX_LINKS = 100;

/** An item that failed `createLinkInput`: kept raw, so it is parsed again on its own for its `fields`. */
class InvalidItem {
  constructor(readonly raw: unknown) {}
}

/**
 * Each item is exactly a POST /links body. `.catch` keeps one bad item from failing the whole body
 * (each item is validated and created on its own, so one bad item stops no other) while the OpenAPI document still
 * shows the item schema of POST /links.
 */
const bulkItem = createLinkInput.catch(({ input }) => new InvalidItem(input) as unknown as CreateLinkInput);

export const bulkCreateInput = body({
  links: z.array(bulkItem).min(1, `1 to ${BULK_MAX_LINKS} links`).max(BULK_MAX_LINKS, `1 to ${BULK_MAX_LINKS} links`),
});

const bulkError = z.object({
  index: z.number().int(),
  error: z.string(),
  fields: z.record(z.string(), z.array(z.string())).optional(),
});
export const bulkCreateOutput = z.object({ created: z.array(linkOutput), errors: z.array(bulkError) });
export type BulkError = z.infer<typeof bulkError>;

const itemError = (index: number, e: { error: string; fields?: Fields }): BulkError =>
  e.fields ? { index, error: e.error, fields: e.fields } : { index, error: e.error };

/**
 * POST /links/bulk: every item through the same schema and the same create service as POST /links,
 * one after the other, so `created` keeps the input order and each item's error carries the code and
 * `fields` POST /links would have answered. A database that is down before anything was created
 * fails the whole call (503); after that, the remaining items report it one by one.
 */
export async function bulkCreateLinks(
  app: Pick<AppServices, "config" | "db" | "database" | "domainCache" | "invalidateSlugs" | "announceSlugs" | "limits" | "log">,
  actor: Actor,
  input: { links: CreateLinkInput[] },
  from: Pick<RequestInfo, "ip">,
) {
  const created: LinkDto[] = [];
  const errors: BulkError[] = [];
  for (const [index, item] of input.links.entries()) {
    if (item instanceof InvalidItem) {
      // With the checks POST /links runs before its schema, so the item lists what POST /links would.
      const extra = isObject(item.raw) ? await createLinkChecks(app, actor, item.raw) : [];
      const failure = await withRuntimeIssues(createLinkInput, item.raw, extra);
      errors.push(itemError(index, toPublicError(failure.issues.length ? failure : new AppError("VALIDATION_FAILED")).body));
      continue;
    }
    try {
      created.push(await createLink(app, actor, item, from));
    } catch (e) {
      if (!(e instanceof AppError)) {
        if (!created.length && isDatabaseUnavailable(e)) throw e;
        app.log.error({ err: e, index }, "bulk item failed");
      }
      errors.push(itemError(index, toPublicError(e).body));
    }
  }
  return { created, errors };
}
