// The floors of the house (README "Architecture"): a file imports only from its own floor or below.
//   0 ground     server/domain/          error codes, AppError, code → status, limits, shared types, pure rules the dashboard shares
//                server/config.ts        configuration (env parsed once)
//   1 data       db/
//   2 lib        server/lib/             helpers that know no transport
//   3 core       server/core/            the app's services: container, auth, link cache, click recorder
//   4 trpc       server/trpc/            tRPC init (base procedures) and context
//   5 routers    server/routers/         one folder per resource: schema, service, router; index = appRouter
//   6 transports server/http/ server/redirect/ server/admin/ server/cli.ts app/   (REST, /trpc, Remix, redirect host, CLI)
//   7 start      server/main.ts
// Tests, benches and e2e sit beside or above what they test and may import anything.
const floors = [
  { name: "ground", path: "^server/(domain/|config\\.ts$)" },
  { name: "data", path: "^db/" },
  { name: "lib", path: "^server/lib/" },
  { name: "core", path: "^server/core/" },
  { name: "trpc", path: "^server/trpc/" },
  { name: "routers", path: "^server/routers/" },
  { name: "transports", path: "^(server/(http|redirect|admin)/|server/cli\\.ts$|app/)" },
  { name: "start", path: "^server/main\\.ts$" },
];
// Pure rules the dashboard and the server share: one copy, in the ground floor.
const sharedRules = "^server/domain/(tags|countries|host-input|contrast|error-messages|page-theme)\\.ts$";
const notTest = "\\.(test|fault|test-helper)\\.tsx?$|^server/test/|^e2e/|^bench/|^db/test-db\\.ts$";

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "An import circle: the files cannot be understood, tested or moved one at a time.",
      from: {},
      to: { circular: true },
    },
    ...floors.flatMap((floor, i) => {
      const above = floors.slice(i + 1).map((f) => f.path);
      if (!above.length) return [];
      return [
        {
          name: `no-upward-import-from-${floor.name}`,
          severity: "error",
          comment: `The ${floor.name} floor imports only from its own floor or below.`,
          from: { path: floor.path, pathNot: notTest },
          to: { path: above.join("|") },
        },
      ];
    }),
    {
      name: "dashboard-is-a-client",
      severity: "error",
      comment:
        "The dashboard reaches the server through its load context (the routers' caller) and Express routes in server/http/: " +
        "its build must hold no server module, or one process runs two copies of their state. Types may be imported, " +
        "and the pure rules both sides apply (tags, country codes, a typed domain, colour contrast, a page's shown theme, the sentence for an error code), which hold no state.",
      from: { path: "^app/", pathNot: notTest },
      to: { path: "^(server|db)/", pathNot: sharedRules, dependencyTypesNot: ["type-only"] },
    },
    {
      name: "shared-rules-are-pure",
      severity: "error",
      comment: "A rule the dashboard's build shares with the server imports nothing, so it carries no server module along.",
      from: { path: sharedRules },
      to: {},
    },
    {
      name: "no-import-of-tests",
      severity: "error",
      comment: "Production code never imports test helpers.",
      from: { pathNot: notTest },
      to: { path: notTest },
    },
    {
      name: "resource-through-its-index",
      severity: "error",
      comment:
        "A resource folder of server/routers/ reaches another resource only through that folder's index.ts: " +
        "the index says what other resources may use; schemas, services and stores behind it stay free to change.",
      from: { path: "^server/routers/([^/]+)/", pathNot: notTest },
      to: { path: "^server/routers/[^/]+/", pathNot: ["^server/routers/$1/", "^server/routers/[^/]+/index\\.ts$"] },
    },
    {
      name: "no-unresolvable",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|build|public/build|data|\\.cache|scratch)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"] },
  },
};
