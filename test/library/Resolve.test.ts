/**
 * The test suite runs the TypeScript sources, also in the processes it starts (through one bundle of
 * them built per run, see support/HeraldBin.ts), while the `herald` bin and host apps run dist/ (see
 * docs/decisions/library.md, "Herald as a library").
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { bin, bundleDir, sourceNodeOptions } from "../support/HeraldBin.js"

const root = path.resolve(import.meta.dirname, "../..")

const resolveIn = (env: NodeJS.ProcessEnv) =>
  execFileSync(
    process.execPath,
    ["--input-type=module", "-e", "console.log(import.meta.resolve('@herald/http/Cli'))"],
    {
      cwd: root,
      env,
      encoding: "utf8"
    }
  ).trim()

describe("resolution of the packages", () => {
  it("vitest loads the sources", async () => {
    const cli = await import("@herald/http/Cli")
    const ids = Object.keys(await import("@herald/core/kernel/Ids"))
    expect(typeof cli.main).toBe("function")
    expect(ids.length).toBeGreaterThan(0)
    // Vite reports the resolved file of an import in the module graph: a src/ path.
    const url = await import.meta.resolve?.("@herald/http/Cli")
    if (url !== undefined) expect(url).toMatch(/\/packages\/http\/src\/Cli\.ts$/)
  })

  it("the herald processes the tests start run a bundle built from the sources in this run", () => {
    const newestSource = (dir: string): number =>
      fs.readdirSync(dir, { withFileTypes: true }).reduce((newest, entry) => {
        const file = path.join(dir, entry.name)
        const time = entry.isDirectory()
          ? newestSource(file)
          : entry.name.endsWith(".ts")
          ? fs.statSync(file).mtimeMs
          : 0
        return Math.max(newest, time)
      }, 0)
    const sources = Math.max(
      ...["core", "adapters", "http"].map((p) => newestSource(path.join(root, "packages", p, "src")))
    )
    expect(fs.statSync(path.join(bundleDir, "herald.mjs")).mtimeMs).toBeGreaterThanOrEqual(sources)
    expect(fs.readFileSync(bin, "utf8")).toContain("./herald.mjs")
  })

  it("a child given the source options runs the sources; plain Node runs dist/", () => {
    expect(resolveIn({ ...process.env, NODE_OPTIONS: sourceNodeOptions })).toMatch(/\/packages\/http\/src\/Cli\.ts$/)
    expect(resolveIn({ ...process.env, NODE_OPTIONS: "" })).toMatch(/\/packages\/http\/dist\/Cli\.js$/)
  })
})
