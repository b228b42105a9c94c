import { z } from "zod";
import { text } from "../../lib/input";

export const AUDIT_PAGE_DEFAULT = 50;
export const AUDIT_PAGE_MAX = 100;

const limitQuery = text()
  .regex(/^\d{1,3}$/, `must be an integer from 1 to ${AUDIT_PAGE_MAX}`)
  .transform(Number)
  .refine((n) => n >= 1 && n <= AUDIT_PAGE_MAX, `must be an integer from 1 to ${AUDIT_PAGE_MAX}`);

/** Query parameters: strings over REST, and from the dashboard's caller alike. */
export const auditListInput = z
  .object({
    limit: limitQuery.describe(`1-${AUDIT_PAGE_MAX} events a page (default ${AUDIT_PAGE_DEFAULT}).`).optional(),
    cursor: text().max(200).describe("The `next_cursor` of the previous page.").optional(),
    actor: text()
      .regex(/^[0-9a-z]{1,32}$/, "must be a user id")
      .describe("Only the events of this person (`actor.user_id`).")
      .optional(),
    action: text()
      .regex(/^[a-z_]{1,32}\.[a-z_]{1,32}$/, "must be an action such as link.created")
      .describe("Only events of this action, such as `link.created` or `member.invited`.")
      .optional(),
    target_type: text()
      .regex(/^[a-z_]{1,32}$/, "must be an object type such as link")
      .describe("Only events about objects of this type (`target.type`: link, linktree, item, domain, webhook, token, member, invite, workspace, import).")
      .optional(),
    target_id: text()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, "must be an object id")
      .describe("Only events about the object of this id (`target.id`).")
      .optional(),
  })
  .strict();
export type AuditListInput = z.output<typeof auditListInput>;

export const auditEventOutput = z.object({
  id: z.string(),
  at: z.number().int().describe("When, in ms since the epoch."),
  actor: z.object({
    user_id: z.string().nullable(),
    email: z.string().nullable().describe("The e-mail of the user at the time."),
    token_id: z.string().nullable().describe("The API token that made the change; null when made in the dashboard."),
  }),
  action: z.string().describe("`<type>.<created|updated|deleted>`, or a verb of its own such as `member.invited` or `domain.verified`."),
  target: z.object({ type: z.string(), id: z.string().nullable() }),
  changes: z
    .union([z.array(z.string()), z.record(z.string(), z.number())])
    .nullable()
    .describe(
      "The names of the members a create set or a change moved (never their values); an import's counts (and a bulk action's, in events written before each changed link was its own event).",
    ),
});

export const auditListOutput = z.object({
  events: z.array(auditEventOutput),
  next_cursor: z.string().nullable().describe("Pass it as `cursor` for the next page; null on the last page."),
});
export type AuditListDto = z.infer<typeof auditListOutput>;

/** What the dashboard's filters offer: the people, actions and object types the log holds. */
export const auditFilterChoicesOutput = z.object({
  people: z.array(z.object({ user_id: z.string(), email: z.string().nullable() })),
  actions: z.array(z.string()),
  target_types: z.array(z.string()),
});
export type AuditFilterChoicesDto = z.infer<typeof auditFilterChoicesOutput>;
