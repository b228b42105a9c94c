import { describe, expect, it } from "vitest";
import { COUNTRY_CODES as SERVER_COUNTRIES } from "../lib/countries";
import { hostNameFromInput as serverHostName } from "../lib/hostnames";
import * as server from "../lib/tags";
import { COUNTRY_CODES } from "../../app/lib/countries";
import { hostNameFromInput } from "../../app/lib/host-input";
import * as dashboard from "../../app/lib/tags";

/**
 * The dashboard keeps its own copies of a few of the server's rules (its build holds no server
 * module): each copy must answer exactly what the server's does.
 */
describe("the dashboard's copies of server rules agree with the server", () => {
  it("country codes: the same set", () => {
    expect([...COUNTRY_CODES].sort()).toEqual([...SERVER_COUNTRIES].sort());
  });

  const typedTags = ["Spring Sale", "Café", "  q4--push ", "#promo", "ÅNGSTRÖM", "a_b.c", "!!", "", "x".repeat(30), "campaign, Q4 Push | campaign,, !!"];
  it("tags: pattern, normalisation and splitting", () => {
    expect(dashboard.TAG_RE.source).toBe(server.TAG_RE.source);
    for (const t of typedTags) {
      expect(dashboard.normalizeTag(t)).toBe(server.normalizeTag(t));
      expect(dashboard.splitTags(t)).toEqual(server.splitTags(t));
      expect(dashboard.normalizeTags(dashboard.splitTags(t))).toEqual(server.normalizeTags(server.splitTags(t)));
    }
  });

  it("a typed domain reduced to its host name", () => {
    for (const t of [
      "https://Links.Acme.test/x?y#z",
      "user:pw@host.test",
      "//go.example.com/",
      "go.example.com/",
      " GO.EXAMPLE.COM ",
      "http://[::1]:80/",
      "a/b",
    ])
      expect(hostNameFromInput(t)).toBe(serverHostName(t));
  });
});
