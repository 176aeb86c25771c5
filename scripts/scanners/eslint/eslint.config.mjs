// fixrail's ESLint configuration for the sast oracle: eslint-plugin-security's
// recommended rules, as errors, on JavaScript of any module kind. It is the
// harness's, passed with --config, so the repository's own ESLint
// configuration (its code, its ignores, its rule settings) never decides
// what the oracle reports.
import security from "eslint-plugin-security";

export default [
  {
    files: ["**/*.js", "**/*.cjs", "**/*.mjs", "**/*.jsx"],
    plugins: { security },
    rules: Object.fromEntries(Object.keys(security.configs.recommended.rules).map((r) => [r, "error"])),
  },
];
