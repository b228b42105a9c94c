export * from "./accounts";
export * from "./links";
