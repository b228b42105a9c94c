import { pgliteTemplate } from "../../db/test-db";

/** Builds the migrated PGlite template once, before the test files load it. */
export default async function setup() {
  if (!process.env.DATABASE_URL) await pgliteTemplate();
}
