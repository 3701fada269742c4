// How the `herald` command is bundled, shared by `npm run build` (scripts/bundle-cli.mjs, from the
// compiled dist/) and the test suite (test/support/BuildCli.ts, from the TypeScript sources).
import { build } from "esbuild"
import * as fs from "node:fs"

/**
 * Bundles `entry` (and everything it imports) into `outdir`/herald.mjs. Native or optional packages
 * stay external and load from node_modules: better-sqlite3 and sharp (compiled addons), pg-native
 * (pg's optional native binding), and ws's optional helpers. Dynamic imports (the /docs page,
 * file-type) stay separate chunks, loaded on first use.
 */
export const bundleCli = async ({ entry, outdir, conditions = [] }) => {
  fs.rmSync(outdir, { recursive: true, force: true })
  await build({
    entryPoints: { herald: entry },
    outdir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    conditions,
    external: ["better-sqlite3", "sharp", "pg-native", "bufferutil", "utf-8-validate"],
    // CommonJS packages in the bundle (pg, ws) call require for Node's built-ins.
    banner: {
      js:
        "import { createRequire as __heraldCreateRequire } from \"node:module\"; const require = __heraldCreateRequire(import.meta.url);"
    },
    legalComments: "none",
    logLevel: "warning"
  })
}
