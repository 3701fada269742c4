// Regenerates each package's src/index.ts: one `export * as Module from "./Module.js"` per top-level
// module, the way the Effect packages expose their modules. Run with `npm run codegen`.
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..")
// A module name found in two folders (oauth/X and platforms/X) is exported under its folder's
// prefix in each (`OAuthX`, `PlatformsX`), so the barrel never exports one name twice.
const prefixes = { oauth: "OAuth" }
const folderPrefix = (folder) => prefixes[folder] ?? folder.charAt(0).toUpperCase() + folder.slice(1)

for (const pkg of ["core", "adapters", "http"]) {
  const src = path.join(root, "packages", pkg, "src")
  const modules = []
  const walk = (dir, prefix) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.isDirectory()) {
        if (entry.name !== "internal" && entry.name !== "migrations") {
          walk(path.join(dir, entry.name), `${prefix}${entry.name}/`)
        }
      } else if (entry.name.endsWith(".ts") && entry.name !== "index.ts" && !entry.name.endsWith(".d.ts")) {
        const name = entry.name.slice(0, -3)
        if (/^[A-Z]/.test(name)) modules.push({ name, prefix })
      }
    }
  }
  walk(src, "")
  const counts = new Map()
  for (const m of modules) counts.set(m.name, (counts.get(m.name) ?? 0) + 1)
  const lines = modules.map(({ name, prefix }) => {
    const folder = prefix.split("/").filter((p) => p !== "").at(-1)
    const exported = counts.get(name) > 1 && folder !== undefined ? `${folderPrefix(folder)}${name}` : name
    return `export * as ${exported} from "./${prefix}${name}.js"`
  })
  fs.writeFileSync(path.join(src, "index.ts"), lines.join("\n") + "\n")
}
