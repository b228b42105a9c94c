import { describe, expect, it } from "vitest";
import { z } from "zod";
import { generateOpenApiDocument, type OpenApiRouter } from "trpc-openapi";
import { contract, outputContract, publicProcedure, router } from "./init";

const shape = z.object({ id: z.string(), url: z.string().url(), tags: z.array(z.string()), title: z.string().nullable() });

const procedures = (check: boolean, answer: unknown) =>
  router({
    get: publicProcedure
      .meta({ openapi: { method: "GET", path: "/thing" } })
      .input(z.object({}))
      .output(outputContract(shape, check))
      .query(() => answer as z.infer<typeof shape>),
  }).createCaller({} as never);

describe("output contracts (server/trpc/init.ts)", () => {
  const good = { id: "a", url: "https://example.com/", tags: ["x"], title: null };

  it("under test, an answer that is exactly its schema passes unchanged", async () => {
    await expect(procedures(true, good).get({})).resolves.toEqual(good);
  });

  it("under test, an answer with a member the schema does not name fails instead of being stripped", async () => {
    await expect(procedures(true, { ...good, passwordHash: "secret" }).get({})).rejects.toThrow(/Output validation failed/);
  });

  it("under test, an answer that breaks the schema fails", async () => {
    await expect(procedures(true, { ...good, url: "not a url" }).get({})).rejects.toThrow(/Output validation failed/);
  });

  it("outside tests the answer is passed on without parsing it", async () => {
    const odd = { ...good, url: "not a url" };
    await expect(procedures(false, odd).get({})).resolves.toBe(odd);
  });

  it("the tests run with the check on", () => {
    const checked = contract(shape);
    return expect(checked.parseAsync({ ...good, extra: 1 })).rejects.toThrow(/not exactly its output schema/);
  });

  it("a contract documents the answer in OpenAPI like the bare schema", () => {
    const doc = (s: z.ZodTypeAny) =>
      generateOpenApiDocument(
        router({
          get: publicProcedure
            .meta({ openapi: { method: "GET", path: "/thing" } })
            .input(z.object({}))
            .output(s)
            .query(() => good),
        }) as unknown as OpenApiRouter,
        { title: "t", version: "1", baseUrl: "http://x" },
      ).paths["/thing"];
    expect(doc(outputContract(shape, false))).toEqual(doc(shape));
    expect(JSON.stringify(doc(shape))).toContain('"format":"uri"');
  });
});
