import { z } from "zod";
import { body, charCount, emailAddress, text } from "../../lib/input";
import { slugFromReportedUrl } from "./short-link-url";

export const REPORT_REASONS = ["phishing", "malware", "spam", "fraude", "outro"] as const;
export const REPORT_STATUSES = ["open", "dismissed", "link_deleted"] as const;

// Forms send "" for an empty optional field: treated as absent.
const emptyToUndefined = (v: unknown) => (v === "" || v === null ? undefined : v);

export const createReportInput = body({
  url: text()
    .max(2000, "at most 2000 characters")
    .describe("A short link on the redirect domain as pasted (scheme optional), or its bare slug")
    .superRefine((v, ctx) => {
      // The host is checked against the redirect domain in the service; here only the shape.
      if (charCount(v) <= 2000 && slugFromReportedUrl(v, null) === null) {
        ctx.addIssue({ code: "custom", message: "must be a short link on the redirect domain, or its slug", params: { code: "NOT_A_SHORT_LINK" } });
      }
    }),
  reason: z.enum(REPORT_REASONS, { errorMap: () => ({ message: `must be one of ${REPORT_REASONS.join(", ")}` }) }),
  detail: z.preprocess(emptyToUndefined, text().max(1000, "at most 1000 characters").optional()),
  email: z.preprocess(emptyToUndefined, emailAddress().optional()),
});
export type CreateReportInput = z.infer<typeof createReportInput>;

export const createReportOutput = z.object({ ok: z.boolean() });

export const reportOutput = z.object({
  id: z.string(),
  link_id: z.string(),
  slug: z.string(),
  url: z.string(),
  reason: z.enum(REPORT_REASONS),
  detail: z.string().nullable(),
  email: z.string().nullable(),
  address: z.string().nullable(),
  user_agent: z.string().nullable(),
  status: z.enum(REPORT_STATUSES),
  created_at: z.number().int(),
  reviewed_at: z.number().int().nullable(),
  reviewed_by: z.string().nullable(),
  /** The reported link as it is now, so a reviewer can judge its destination. */
  link: z.object({ url: z.string(), workspace_id: z.string(), kind: z.string(), deleted_at: z.number().int().nullable() }).nullable(),
});
export type ReportDto = z.infer<typeof reportOutput>;

export const listReportsInput = z.object({ status: z.enum(REPORT_STATUSES).optional() });
export const reportIdInput = z.object({ id: text() });
