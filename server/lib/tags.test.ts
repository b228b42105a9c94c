import { describe, expect, it } from "vitest";
import { normalizeTag, normalizeTags, splitTags, tagProblem } from "./tags";
import { tagsFromCell } from "../routers/imports/formats";
import { createLinkInput } from "../routers/links/links.schema";
import { toPublicError } from "../domain/errors";

describe("tag normalisation: one function for the dashboard and the importers", () => {
  it.each([
    ["Campaign", "campaign"],
    ["Q4 Push", "q4-push"],
    ["Spring Sale", "spring-sale"],
    ["  Café & Crème ", "cafe-creme"],
    ["--a__b--", "a-b"],
    ["2026", "2026"],
    ["!!!", ""],
  ])("%j → %j", (typed, tag) => {
    expect(normalizeTag(typed)).toBe(tag);
  });

  it("drops empty and repeated tags, and splits typed text on commas only (a tag may hold spaces)", () => {
    expect(normalizeTags(splitTags("Campaign, Q4 Push, campaign, ,  !!"))).toEqual(["campaign", "q4-push"]);
  });

  it("is what the importers of other services' files apply", () => {
    expect(tagsFromCell("Spring Sale|Q4 Push", true)).toEqual(["spring-sale", "q4-push"]);
    // Our own files are read as they are: the API's rule then names a bad tag.
    expect(tagsFromCell("Spring Sale", false)).toEqual(["Spring Sale"]);
  });

  it("leaves the API's rule as it is: a bad tag is 400 INVALID_TAG naming the tag, not its index", () => {
    expect(tagProblem("q4-push")).toBeNull();
    const r = createLinkInput.safeParse({ url: "https://example.com/", tags: ["ok", "Q4 Push", "Campaign"] });
    expect(r.success).toBe(false);
    expect(toPublicError(r.error).body).toEqual({
      error: "INVALID_TAG",
      fields: {
        tags: [
          '"Q4 Push" is not a tag: each tag must be 1-24 characters of 0-9, a-z and - (try "q4-push")',
          '"Campaign" is not a tag: each tag must be 1-24 characters of 0-9, a-z and - (try "campaign")',
        ],
      },
    });
  });
});
