// `npm run lint`: ESLint with typescript-eslint's recommended rules and the Effect codebase's
// formatting (dprint through @effect/eslint-plugin: 2 spaces, 120 columns, no semicolons, double
// quotes, no trailing commas). `npm run format` applies the formatting.
import * as effectEslint from "@effect/eslint-plugin"
import eslint from "@eslint/js"
import globals from "globals"
import tseslint from "typescript-eslint"

export default tseslint.config(
  {
    ignores: [
      "**/node_modules/**",
      "**/dist/**",
      "**/build/**",
      "**/.test-bin/**",
      "**/.herald/**",
      "test-artifacts/**",
      "packages/http/src/dashboard/vendor/**"
    ]
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  ...effectEslint.configs.dprint,
  // The dashboard's modules run in the browser; scripts, examples and configuration files in Node.
  { files: ["packages/http/src/dashboard/**/*.js"], languageOptions: { globals: globals.browser } },
  { files: ["**/*.mjs", "**/*.cjs"], languageOptions: { globals: globals.node } },
  {
    rules: {
      // Refusing control characters in names and text is what those expressions are for.
      "no-control-regex": "off",
      // The compiler checks these (noUnusedLocals, noUnusedParameters) with the project's own settings.
      "@typescript-eslint/no-unused-vars": "off",
      "@effect/dprint": [
        "error",
        {
          config: {
            indentWidth: 2,
            lineWidth: 120,
            semiColons: "asi",
            quoteStyle: "alwaysDouble",
            trailingCommas: "never",
            operatorPosition: "maintain",
            "arrowFunction.useParentheses": "force",
            // Import order is evaluation order: left as written, so formatting never changes behaviour.
            "module.sortImportDeclarations": "maintain",
            "module.sortExportDeclarations": "maintain"
          }
        }
      ]
    }
  }
)
