import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../config";
import { tempDataDir } from "../../db/test-db";
import { startDnsServer, type TestDnsServer } from "../routers/domains/dns-server.test-helper";
import { lookupTxt } from "./dns";

describe("DNS_SERVERS and CUSTOM_DOMAIN_SCHEME (configuration)", () => {
  const config = (env: Record<string, string>) => parseConfig({ DATA_DIR: tempDataDir(), ...env });

  it("DNS_SERVERS is unset by default (the system resolver); CUSTOM_DOMAIN_SCHEME defaults to https", () => {
    expect(config({}).dnsServers).toBeUndefined();
    expect(config({}).customDomainScheme).toBe("https");
    expect(config({ CUSTOM_DOMAIN_SCHEME: "http" }).customDomainScheme).toBe("http");
  });

  it("DNS_SERVERS takes comma-separated host:port (IPv4, [IPv6], a bare address)", () => {
    expect(config({ DNS_SERVERS: "127.0.0.1:5353, [::1]:53,9.9.9.9" }).dnsServers).toEqual(["127.0.0.1:5353", "[::1]:53", "9.9.9.9"]);
  });

  it.each([
    ["DNS_SERVERS", "dns.example:53"],
    ["DNS_SERVERS", "127.0.0.1:0"],
    ["DNS_SERVERS", "127.0.0.1:70000"],
    ["DNS_SERVERS", "127.0.0.1:53,"],
    ["DNS_SERVERS", "::1:53x"],
    ["CUSTOM_DOMAIN_SCHEME", "ftp"],
  ])("refuses %s=%s naming the variable", (name, value) => {
    expect(() => config({ [name]: value })).toThrow(ConfigError);
    expect(() => config({ [name]: value })).toThrow(name);
  });
});

describe("lookupTxt", () => {
  let server: TestDnsServer;
  beforeAll(async () => {
    server = await startDnsServer({ txt: { "_links-verify.go.example.com": ["links-verify=abc", "v=spf1 -all"], "long.example.com": ["x".repeat(300)] } });
  });
  afterAll(() => server?.close());

  it("answers every TXT record of the name, long ones joined from their strings", async () => {
    expect(await lookupTxt("_links-verify.go.example.com", { servers: [server.address] })).toEqual({ records: ["links-verify=abc", "v=spf1 -all"] });
    expect((await lookupTxt("long.example.com", { servers: [server.address] })).records).toEqual(["x".repeat(300)]);
  });

  it("no record: none, never a throw", async () => {
    expect(await lookupTxt("nothing.example.com", { servers: [server.address] })).toEqual({ records: [], error: "ENODATA" });
  });

  it("a server that does not answer: none, within the timeout", async () => {
    const silent = await startDnsServer({ silent: true });
    try {
      const started = Date.now();
      expect(await lookupTxt("go.example.com", { servers: [silent.address], timeoutMs: 800 })).toEqual({ records: [], error: "ETIMEOUT" });
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      await silent.close();
    }
  });
});
