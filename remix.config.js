/** @type {import('@remix-run/dev').AppConfig} */
export default {
  ignoredRouteFiles: ["**/.*", "**/*.test.*"],
  serverModuleFormat: "esm",
  serverBuildPath: "build/index.js",
  assetsBuildDirectory: "public/build",
  publicPath: "/build/",
  // Tailwind 3 through the classic compiler: app/tailwind.css is processed on build.
  tailwind: true,
  // Server-only packages stay external: loaders reach them through the load context. The two icon
  // packages go in, cut to the icons the linktree page draws (a few kB of 17 MB): the build needs
  // them, a production install does not.
  serverDependenciesToBundle: ["simple-icons", "@mdi/js"],
  future: {
    v3_fetcherPersist: true,
    v3_relativeSplatPath: true,
    v3_throwAbortReason: true,
    v3_lazyRouteDiscovery: true,
    v3_singleFetch: true,
  },
};
