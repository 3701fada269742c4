/**
 * Vitest's global setup: bundles the `herald` command from the TypeScript sources (the
 * `herald-source` export condition), so every process the tests start runs the code under test
 * without transpiling it again. See HeraldBin.ts.
 */
import * as fs from "node:fs"
import * as path from "node:path"
// @ts-expect-error: a plain ES module shared with `npm run build`, without type declarations
import { bundleCli } from "../../scripts/cli-bundle.mjs"
import { bin, bundleDir, repoRoot } from "./HeraldBin.js"

export default async function setup(): Promise<void> {
  await bundleCli({
    entry: path.join(repoRoot, "packages/http/src/Cli.ts"),
    outdir: bundleDir,
    conditions: ["herald-source"]
  })
  // What packages/http/bin/herald.mjs does with the command's module.
  fs.writeFileSync(
    bin,
    "import { main } from \"./herald.mjs\"\n" +
      "const code = await main(process.argv.slice(2))\n" +
      "if (code !== \"running\") process.exitCode = code\n"
  )
}
