import { describe, expect, it } from "vitest";
import { z } from "zod";
import { plainFieldMessage, plainFields } from "../../app/lib/plain-words";

describe("plain words for the dashboard's field messages", () => {
  it("the library's own words (Required, Expected …) become plain words", () => {
    const r = z.object({ name: z.string(), email: z.string().email(), url: z.string().url() }).safeParse({ email: "x", url: "y" });
    expect(r.success).toBe(false);
    const fields = plainFields(r.success ? {} : (r.error.flatten().fieldErrors as Record<string, string[]>));
    expect(fields).toEqual({
      name: ["must be filled in"],
      email: ["must be an e-mail address, such as name@example.com"],
      url: ["must be a web address, such as https://example.com/"],
    });
    expect(JSON.stringify(fields)).not.toMatch(/Required|Expected|Invalid/);
  });

  it("our own messages are kept as they are", () => {
    expect(plainFieldMessage("must be at most 253 characters")).toBe("must be at most 253 characters");
  });
});
