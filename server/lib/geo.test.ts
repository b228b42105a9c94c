import { describe, expect, it } from "vitest";
import { isPublicIp, lookupGeo, NO_GEO } from "./geo";

describe("addresses with no place on the map", () => {
  it.each([
    "0.0.0.0",
    "0.255.255.255",
    "10.0.0.1",
    "10.255.255.255",
    "100.64.0.0",
    "100.127.255.255",
    "127.0.0.1",
    "127.255.255.254",
    "169.254.1.1",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.0.1",
    "192.168.255.255",
    "::ffff:10.1.2.3",
    "::ffff:127.0.0.1",
    "::1",
    "::",
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
  ])("loopback, private, link-local, CGNAT and unique-local: %s is not public", (ip) => {
    expect(isPublicIp(ip)).toBe(false);
  });

  it.each([
    "1.0.0.1",
    "9.255.255.255",
    "11.0.0.0",
    "100.63.255.255",
    "100.128.0.0",
    "126.255.255.255",
    "128.0.0.0",
    "169.253.255.255",
    "169.255.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "192.167.255.255",
    "192.169.0.0",
    "203.0.113.9",
    "255.255.255.255",
    "::ffff:81.2.69.160",
    "2001:db8::1",
    "2a00:1450::1",
  ])("the address just outside each range, and others, are public: %s", (ip) => {
    expect(isPublicIp(ip)).toBe(true);
  });

  it.each(["", "localhost", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4x", "::ffff:999.1.1.1"])("what is not an address is not public: %j", (ip) => {
    expect(isPublicIp(ip)).toBe(false);
  });
});

describe("GeoIP", () => {
  it("an IPv4 address gets its place; an IPv4-mapped IPv6 address the same", async () => {
    expect(await lookupGeo("81.2.69.160")).toMatchObject({ country: "GB" });
    expect(await lookupGeo("::ffff:81.2.69.160")).toMatchObject({ country: "GB" });
  });

  it("an address the database has no coordinates for (it says 0, 0) gets none, its country still", async () => {
    const g = await lookupGeo("67.43.156.0");
    expect(g.country).not.toBeNull();
    expect([g.lat, g.lng]).toEqual([null, null]);
    expect((await lookupGeo("81.2.69.160")).lat).not.toBeNull();
  });

  it("a public IPv6 address gets its country", async () => {
    expect(await lookupGeo("2a02:8100::1")).toEqual({ ...NO_GEO, country: "DE" });
    expect((await lookupGeo("2a00:1450:4001:80b::200e")).country).toBe("DE");
  });

  it("loopback, private and unique-local addresses get none", async () => {
    for (const ip of ["127.0.0.1", "10.1.2.3", "::1", "fd12:3456::1", "fe80::1"]) expect(await lookupGeo(ip), ip).toEqual(NO_GEO);
  });
});
