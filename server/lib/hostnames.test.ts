import { describe, expect, it } from "vitest";
import { hostNameFromInput } from "../domain/host-input";
import { hostFromHeader, hostNameProblems, hostPart } from "./hostnames";

describe("hostNameProblems (a branded domain's name)", () => {
  it.each(["go.acme.com", "a.b", "xn--bcher-kva.example", "x-1.y2.example", `${"a".repeat(63)}.example`])("accepts %s", (name) => {
    expect(hostNameProblems(name, [])).toEqual([]);
  });

  it.each([
    ["https://go.acme.com", /scheme/],
    ["//go.acme.com", /scheme/],
    ["go.acme.com/x", /path/],
    ["go.acme.com?x", /path/],
    ["go.acme.com:443", /port/],
    ["10.0.0.1", /IP address/],
    ["::1", /IP address/],
    ["[::1]", /IP address/],
    ["GO.acme.com", /lower case/],
    ["bücher.example", /punycode/],
    ["xn--.example", /punycode|label/],
    ["com", /two labels/],
    ["go..com", /empty/],
    [".go.com", /empty/],
    ["go.com.", /dot/],
    ["go-.acme.com", /hyphen/],
    ["go_x.acme.com", /letters/],
    [`${"a".repeat(64)}.example`, /63/],
    [`${"a.".repeat(127)}com`, /253/],
    ["go.acme.42", /IP address/],
    ["", /empty/],
  ])("refuses %s", (name, message) => {
    const problems = hostNameProblems(name, []);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.join(" ")).toMatch(message);
  });

  it("refuses the service's own host names", () => {
    expect(hostNameProblems("go.test", ["go.test", "app.test"]).join(" ")).toMatch(/own host/);
    expect(hostNameProblems("sub.go.test", ["go.test"])).toEqual([]);
  });
});

describe("Host headers", () => {
  it.each([
    ["Go.Acme.COM", "go.acme.com"],
    ["go.acme.com:8080", "go.acme.com"],
    ["go.acme.com.", "go.acme.com"],
    ["go.acme.com.:443", "go.acme.com"],
    ["[::1]:80", null],
    ["127.0.0.1:3001", null],
    ["localhost", null],
    ["bad host.com", null],
    ["", null],
  ])("%s → %s", (host, expected) => {
    expect(hostFromHeader(host)).toBe(expected);
  });

  it("hostPart keeps IPv6 brackets and drops the port", () => {
    expect(hostPart("[::1]:3001")).toBe("[::1]");
    expect(hostPart("LOCALHOST:3001")).toBe("localhost");
  });
});

describe("hostNameFromInput (what the dashboard's domain field is reduced to)", () => {
  it.each([
    ["https://Links.Acme.test/", "links.acme.test"],
    ["  HTTP://user:pw@Go.Acme.test/path?q=1#top ", "go.acme.test"],
    ["//go.acme.test/x", "go.acme.test"],
    ["GO.ACME.TEST", "go.acme.test"],
    ["go.acme.test/", "go.acme.test"],
  ])("a pasted URL or upper case is normalised to the host name: %s", (input, name) => {
    expect(hostNameFromInput(input)).toBe(name);
    expect(hostNameProblems(hostNameFromInput(input), [])).toEqual([]);
  });

  it.each([
    ["go.acme.test:8080", /port/],
    ["go.acme.test/path", /path/],
    ["Bücher.example", /punycode/],
    [`${"a".repeat(64)}.example`, /63/],
    [`${"a.".repeat(127)}com`, /253/],
    ["-go.acme.test", /hyphen/],
  ])("what normalising cannot mend is still named: %s", (input, problem) => {
    expect(hostNameProblems(hostNameFromInput(input), []).join(" ")).toMatch(problem);
  });
});
