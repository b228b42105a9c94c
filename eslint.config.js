// ESLint: typescript-eslint everywhere; React hooks and accessibility rules for the dashboard.
// Layering (floors, import circles) is dependency-cruiser's job: see .dependency-cruiser.cjs.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import reactHooks from "eslint-plugin-react-hooks";
import jsxA11y from "eslint-plugin-jsx-a11y";
import globals from "globals";

export default tseslint.config(
  { ignores: ["node_modules/", "build/", "public/build/", "data/", ".cache/", "scratch/", "e2e/screenshots/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "no-control-regex": "off", // control characters in patterns are deliberate (input sanitising)
    },
  },
  {
    // Tests read JSON answers of any shape.
    files: ["**/*.test.ts", "**/*.fault.ts", "server/test/**", "e2e/**", "bench/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    // Outputs are checked under test and trusted elsewhere (server/trpc/init.ts, contract): none may skip that.
    files: ["server/routers/**/*.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "CallExpression[callee.property.name='output'][arguments.0.callee.name!='contract']",
          message: "Wrap output schemas in contract() (server/trpc/init.ts): checked under test, trusted in production.",
        },
      ],
    },
  },
  { files: ["public/**/*.js"], languageOptions: { globals: { ...globals.browser } } },
  {
    files: ["app/**/*.{ts,tsx}"],
    ...jsxA11y.flatConfigs.recommended,
    languageOptions: { ...jsxA11y.flatConfigs.recommended.languageOptions, globals: { ...globals.browser } },
  },
  {
    files: ["app/**/*.{ts,tsx}"],
    plugins: { "react-hooks": reactHooks },
    rules: { "react-hooks/rules-of-hooks": "error", "react-hooks/exhaustive-deps": "error" },
  },
  {
    // The sign-in page has one field at a time and nothing else to do: focusing it is what people expect there.
    files: ["app/routes/login.tsx"],
    rules: { "jsx-a11y/no-autofocus": "off" },
  },
);
