// Regenerates each package's src/index.ts: one `export * as Module from "./Module.js"` per top-level
// module, the way the Effect packages expose their modules. Run with `npm run codegen`.
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..")
for (const pkg of ["core", "adapters", "http"]) {
  const src = path.join(root, "packages", pkg, "src")
  const lines = []
  const walk = (dir, prefix) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.isDirectory()) {
        if (entry.name !== "internal" && entry.name !== "migrations") walk(path.join(dir, entry.name), `${prefix}${entry.name}/`)
      } else if (entry.name.endsWith(".ts") && entry.name !== "index.ts" && !entry.name.endsWith(".d.ts")) {
        const name = entry.name.slice(0, -3)
        if (/^[A-Z]/.test(name)) lines.push(`export * as ${name} from "./${prefix}${name}.js"`)
      }
    }
  }
  walk(src, "")
  fs.writeFileSync(path.join(src, "index.ts"), lines.join("\n") + "\n")
}
