import { afterAll, beforeAll, expect, it } from "vitest";
import { createTRPCProxyClient, httpBatchLink, TRPCClientError } from "@trpc/client";
import type { AppRouter } from "../routers";
import { createTestServer, type TestServer } from "../test/harness";

let t: TestServer;
beforeAll(async () => {
  t = await createTestServer();
});
afterAll(() => t?.close());

const clientFor = (token?: string) =>
  createTRPCProxyClient<AppRouter>({
    links: [httpBatchLink({ url: `${t.api}/trpc`, headers: () => (token ? { authorization: `Bearer ${token}` } : {}) })],
  });

it("serves the same router to @trpc/client at API_URL/trpc with token authentication", async () => {
  const user = await t.user();
  const client = clientFor(user.token);
  const link = await client.link.create.mutate({ url: "https://example.com/trpc", tags: ["b", "a"] });
  expect(link.tags).toEqual(["a", "b"]);
  const { links } = await client.link.list.query({});
  expect(links.map((l) => l.id)).toEqual([link.id]);
});

it("gives typed-client callers the same error code and fields as REST callers", async () => {
  const user = await t.user();
  const err = await clientFor(user.token)
    .link.create.mutate({ url: "nope", slug: "BAD" })
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(TRPCClientError);
  const data = (err as TRPCClientError<AppRouter>).data as { error?: string; fields?: Record<string, string[]> };
  expect(data.error).toBe("INVALID_LINK_ID");
  expect(Object.keys(data.fields ?? {})).toEqual(expect.arrayContaining(["url", "slug"]));
});

it("answers UNAUTHORIZED to the typed client without a credential", async () => {
  const err = await clientFor()
    .link.list.query({})
    .catch((e: unknown) => e);
  expect((err as TRPCClientError<AppRouter>).data?.error).toBe("UNAUTHORIZED");
});
