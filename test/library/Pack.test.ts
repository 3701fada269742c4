/**
 * The packages as a host app gets them: packed with `npm pack`, installed from the tarballs into a
 * fresh directory (their registry dependencies from the npm cache, `--prefer-offline`), and used from
 * plain JavaScript with none of the repo's dev dependencies. Install scripts are off so nothing downloads
 * a binary; the host's compiled better-sqlite3 addon is the repo's (same version), as a host that builds
 * native modules would have.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"

const root = path.resolve(import.meta.dirname, "../..")
const work = fs.mkdtempSync(path.join(os.tmpdir(), "herald-pack-"))
afterAll(() => fs.rmSync(work, { recursive: true, force: true }))

// Plain Node: without the test suite's herald-source condition and tsx loader.
const env = { ...process.env, NODE_OPTIONS: "" }
const run = (command: string, args: ReadonlyArray<string>, cwd: string) =>
  execFileSync(command, args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 150_000 })

describe("packed packages in a host app", () => {
  it("install from their tarballs and publish a post in-process from plain JavaScript", () => {
    // dist/ as `npm ci` builds it (`npm run build`: tsc, incremental, then the `herald` command's bundle).
    run("npm", ["run", "build"], root)
    run("npm", [
      "pack",
      "--workspace",
      "packages/core",
      "--workspace",
      "packages/adapters",
      "--workspace",
      "packages/http",
      "--pack-destination",
      work
    ], root)
    const host = path.join(work, "host")
    fs.mkdirSync(host)
    fs.writeFileSync(
      path.join(host, "package.json"),
      JSON.stringify({
        name: "host",
        private: true,
        type: "module",
        dependencies: Object.fromEntries(
          ["core", "adapters", "http"].map((p) => [`@herald/${p}`, `file:../herald-${p}-0.1.0.tgz`])
        )
      })
    )
    run("npm", ["install", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund"], host)
    const addon = "node_modules/better-sqlite3/build/Release/better_sqlite3.node"
    fs.mkdirSync(path.dirname(path.join(host, addon)), { recursive: true })
    fs.copyFileSync(path.join(root, addon), path.join(host, addon))

    // What was installed: compiled JavaScript with declarations, no TypeScript tooling.
    const http = path.join(host, "node_modules/@herald/http")
    expect(fs.existsSync(path.join(http, "dist/HeraldClient.js"))).toBe(true)
    expect(fs.existsSync(path.join(http, "dist/HeraldClient.d.ts"))).toBe(true)
    for (const dev of ["tsx", "typescript", "vitest"]) {
      expect(fs.existsSync(path.join(host, "node_modules", dev)), dev).toBe(false)
    }

    // The example host runs unchanged against the installed packages.
    fs.copyFileSync(path.join(root, "examples/host-promise.mjs"), path.join(host, "host.mjs"))
    const out = run(process.execPath, ["host.mjs"], host)
    expect(out).toMatch(/created post [0-9a-f-]{36}/)
    const postId = /created post ([0-9a-f-]{36})/.exec(out)![1]
    expect(out).toContain(`post.published ${postId}`)
    expect(out).toContain("lookup failed: not_found")

    // The herald command runs the compiled JavaScript, bundled (scripts/bundle-cli.mjs), with its
    // native dependencies (better-sqlite3 here) loaded from the host's node_modules.
    expect(fs.existsSync(path.join(http, "dist/bin/herald.mjs"))).toBe(true)
    const usage = run(path.join(host, "node_modules/.bin/herald"), ["--help"], host)
    expect(usage).toContain("herald serve")
    const migrate = execFileSync(path.join(host, "node_modules/.bin/herald"), ["migrate", "--data-dir", "cli-data"], {
      cwd: host,
      env: { ...env, HERALD_DATABASE_URL: "" },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 60_000
    })
    expect(migrate).toBe("")
    expect(fs.existsSync(path.join(host, "cli-data/herald.db"))).toBe(true)

    // The dashboard's files ship in the package, and the compiled server finds them there.
    const found = run(process.execPath, [
      "--input-type=module",
      "-e",
      "const d = await import('@herald/http/Dashboard'); const dir = d.directory(); " +
      "console.log(dir); console.log([...d.readAssets(dir).keys()].sort().join(',')); " +
      "for (const [name, a] of d.readVendorAssets()) console.log(name, a.body.length)"
    ], host)
    expect(found).toContain(path.join(fs.realpathSync(http), "src/dashboard"))
    expect(found).toContain("pages/compose.js")
    // The chart library the analytics page loads comes from the installed chart.js package.
    expect(found).toMatch(/^vendor\/chart\.umd\.min\.js [1-9]\d{4,}$/m)
  }, 240_000)
})
