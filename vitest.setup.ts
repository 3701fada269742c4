import { addEqualityTesters } from "@effect/vitest"
import * as path from "node:path"
import { pathToFileURL } from "node:url"

addEqualityTesters()

// Processes the tests start (`herald serve`, `herald worker`) run the TypeScript sources, not dist/:
// the `herald-source` export condition points the packages at src/, and tsx loads it.
const tsx = pathToFileURL(path.join(import.meta.dirname, "node_modules/tsx/dist/esm/index.mjs")).href
if (!(process.env.NODE_OPTIONS ?? "").includes("herald-source")) {
  process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ""} --conditions=herald-source --import=${tsx}`.trim()
}
