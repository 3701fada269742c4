/**
 * The test suite runs the TypeScript sources, also in the processes it starts, while the `herald` bin
 * and host apps run dist/ (see decisions.md, "Herald as a library").
 */
import { execFileSync } from "node:child_process"
import * as path from "node:path"
import { describe, expect, it } from "vitest"

const root = path.resolve(import.meta.dirname, "../..")

const resolveIn = (env: NodeJS.ProcessEnv) =>
  execFileSync(process.execPath, ["--input-type=module", "-e", "console.log(import.meta.resolve('@herald/http/Cli'))"], {
    cwd: root,
    env,
    encoding: "utf8"
  }).trim()

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

  it("child processes of the tests run the sources; plain Node runs dist/", () => {
    expect(resolveIn(process.env)).toMatch(/\/packages\/http\/src\/Cli\.ts$/)
    expect(resolveIn({ ...process.env, NODE_OPTIONS: "" })).toMatch(/\/packages\/http\/dist\/Cli\.js$/)
  })
})
