// Bundles the compiled `herald` command (packages/http/dist/Cli.js and everything it imports) into
// packages/http/dist/bin/, run by `npm run build` after tsc. Why: Node 20 loaded ~840 ES modules at
// every `herald serve` start (effect, fast-check through effect/Schema, @effect/platform, the three
// packages), and resolving, reading and linking them was most of the start; one bundle cut the import
// from ~870 ms to ~280 ms of CPU and ~30 MB of RSS (bench/Startup.ts). Dynamic imports (the /docs
// page, file-type) stay separate chunks, loaded on first use as in dist/.
//
// The library entry points (`@herald/http`, `@herald/http/Herald`, ...) are untouched: hosts import
// dist/ module by module and share one copy of effect with their own code.
import * as path from "node:path"
import { bundleCli } from "./cli-bundle.mjs"

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..")
const http = path.join(root, "packages/http")

await bundleCli({ entry: path.join(http, "dist/Cli.js"), outdir: path.join(http, "dist/bin") })
