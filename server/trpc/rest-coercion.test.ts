import { describe, expect, it } from "vitest";
import { z } from "zod";
import { appRouter } from "../routers";

// trpc-openapi 1.2 turns on coercion of the top-level number, boolean, bigint and date members of a
// REST procedure's input on its first REST call, by changing the shared schema: a missing boolean
// then reads as false, for the dashboard's calls too. Each such member goes through a preprocess
// step (strictNumber, or a string schema on purpose), which hides it from that.
describe("REST inputs and trpc-openapi's coercion", () => {
  it("no procedure with a REST path has a bare number, boolean, bigint or date member at the top of its input", () => {
    const bare: string[] = [];
    const unwrap = (s: z.ZodTypeAny): z.ZodTypeAny =>
      s instanceof z.ZodOptional || s instanceof z.ZodNullable ? unwrap(s.unwrap()) : s instanceof z.ZodDefault ? unwrap(s._def.innerType) : s;
    const objectOf = (s: z.ZodTypeAny): z.ZodObject<z.ZodRawShape> | null => {
      const u = unwrap(s);
      if (u instanceof z.ZodObject) return u;
      if (u instanceof z.ZodEffects) return objectOf(u._def.schema);
      return null;
    };
    const procedures = (appRouter._def as unknown as { procedures: Record<string, { _def: { inputs: z.ZodTypeAny[]; meta?: { openapi?: unknown } } }> })
      .procedures;
    for (const [name, p] of Object.entries(procedures)) {
      if (!p._def.meta?.openapi) continue;
      for (const input of p._def.inputs) {
        const shape = objectOf(input)?.shape ?? {};
        for (const [k, v] of Object.entries(shape)) {
          const u = unwrap(v as z.ZodTypeAny);
          if (u instanceof z.ZodNumber || u instanceof z.ZodBoolean || u instanceof z.ZodBigInt || u instanceof z.ZodDate) bare.push(`${name}.${k}`);
        }
      }
    }
    expect(bare).toEqual([]);
  });
});
