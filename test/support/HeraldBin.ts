/**
 * The `herald` command the tests spawn (`herald serve`, `herald worker`, the CLI): one bundle of the
 * TypeScript sources, built once per run by `BuildCli.ts` (vitest's global setup). Spawning
 * `packages/http/bin/herald.mjs` under tsx instead transpiled and linked ~840 modules in every child,
 * about 6 s of CPU each against about 1 s for the bundle, and the suite starts well over a hundred.
 */
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

/**
 * Beside `packages/http/src`, so the dashboard's files are found as from `dist/bin` (two folders up,
 * then `src/dashboard`); outside `dist/`, so `npm pack` never ships it.
 */
export const bundleDir = path.join(repoRoot, "packages/http/.test-bin/bin")

/** Runs the bundled command's `main` with the process's arguments, as packages/http/bin/herald.mjs does. */
export const bin = path.join(bundleDir, "run.mjs")

/**
 * NODE_OPTIONS for a child that runs TypeScript sources itself (an example written in TypeScript, a
 * walkthrough that starts `packages/http/bin/herald.mjs`): the `herald-source` export condition
 * points the packages at src/, and tsx loads it.
 */
export const sourceNodeOptions = `--conditions=herald-source --import=${
  pathToFileURL(path.join(repoRoot, "node_modules/tsx/dist/esm/index.mjs")).href
}`
