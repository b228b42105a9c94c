import { describe, expect, it } from "vitest";
import { normalizeTag, normalizeTags, splitTags, tagProblem } from "./tags";
import { tagsFromCell } from "../routers/imports/formats";
import { createLinkInput } from "../routers/links/links.schema";
import { toPublicError } from "./errors";
import { withScheme } from "../../app/lib/link-form";
import { createInputFrom, updateInputFrom } from "../../app/lib/link-form.server";

const form = (fields: Record<string, string>) => {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.set(k, v);
  return f;
};

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

describe("the dashboard's link form normalises what a person types (and shows the result)", () => {
  it("tags: the importers' normalisation, commas between tags", () => {
    const { values, input } = createInputFrom(form({ url: "https://example.com/", tags: "Campaign, Q4 Push, campaign" }));
    expect(input.tags).toEqual(["campaign", "q4-push"]);
    expect(values.tags).toBe("campaign, q4-push");
  });

  it.each([
    ["example.com/x", "https://example.com/x"],
    ["  www.example.com  ", "https://www.example.com"],
    ["//cdn.example.com/a.png", "https://cdn.example.com/a.png"],
    ["example.com:8080/x", "https://example.com:8080/x"],
    ["http://example.com/", "http://example.com/"],
    ["HTTPS://EXAMPLE.COM/", "HTTPS://EXAMPLE.COM/"],
    ["mailto:a@b.c", "mailto:a@b.c"],
    ["", ""],
  ])("an address without a scheme gets https://: %j → %j", (typed, saved) => {
    expect(withScheme(typed)).toBe(saved);
  });

  it("every address field of the form, and the title, on create and on update", () => {
    const fields = {
      url: "example.com/x",
      expires_at_local: "2099-01-01T00:00",
      expiration_url: "example.com/over",
      ios: "apps.apple.com/app/id1",
      android: "play.google.com/x",
      geo_country: "DE",
      geo_url: "example.de",
      og_image: "cdn.example.com/card.png",
      title: " Spring campaign ",
    };
    const { input } = createInputFrom(form(fields));
    expect(input).toMatchObject({
      url: "https://example.com/x",
      expiration_url: "https://example.com/over",
      targeting: { ios: "https://apps.apple.com/app/id1", android: "https://play.google.com/x", geo: { DE: "https://example.de" } },
      og_image: "https://cdn.example.com/card.png",
      title: "Spring campaign",
    });
    const current = { id: "abcd1234", slug: "s", expires_at: null } as Parameters<typeof updateInputFrom>[1];
    expect(updateInputFrom(form({ ...fields, title: "" }), current).input).toMatchObject({ url: "https://example.com/x", title: null });
  });
});
