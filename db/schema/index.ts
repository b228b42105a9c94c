export * from "./accounts";
export * from "./links";
export * from "./teams";
export * from "./domains";
export * from "./imports";
export * from "./idempotency";
