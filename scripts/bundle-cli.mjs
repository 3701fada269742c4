// Bundles the compiled `herald` command (packages/http/dist/Cli.js and everything it imports) into
// packages/http/dist/bin/, run by `npm run build` after tsc. Why: Node 20 loaded ~840 ES modules at
// every `herald serve` start (effect, fast-check through effect/Schema, @effect/platform, the three
// packages), and resolving, reading and linking them was most of the start; one bundle cut the import
// from ~870 ms to ~280 ms of CPU and ~30 MB of RSS (bench/Startup.ts). Dynamic imports (the /docs
// page, file-type) stay separate chunks, loaded on first use as in dist/.
//
// Native or optional packages stay external and load from node_modules as before: better-sqlite3
// and sharp (compiled addons), pg-native (pg's optional native binding), and ws's optional helpers.
// The library entry points (`@herald/http`, `@herald/http/Herald`, ...) are untouched: hosts import
// dist/ module by module and share one copy of effect with their own code.
import { build } from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..")
const http = path.join(root, "packages/http")
const outdir = path.join(http, "dist/bin")

fs.rmSync(outdir, { recursive: true, force: true })
await build({
  entryPoints: { herald: path.join(http, "dist/Cli.js") },
  outdir,
  outExtension: { ".js": ".mjs" },
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external: ["better-sqlite3", "sharp", "pg-native", "bufferutil", "utf-8-validate"],
  // CommonJS packages in the bundle (pg, ws) call require for Node's built-ins.
  banner: { js: "import { createRequire as __heraldCreateRequire } from \"node:module\"; const require = __heraldCreateRequire(import.meta.url);" },
  legalComments: "none",
  logLevel: "warning"
})
