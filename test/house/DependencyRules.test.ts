/**
 * The dependency rules of `.dependency-cruiser.cjs` catch what they are for: an upward import between
 * core's layers, I/O in core, and an import against the packages' direction. Checked on a small tree of
 * the repository's shape in a temporary directory, with the repository's own configuration, so a rule
 * that stops matching (a renamed folder, a typo in a path) fails here.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { repoRoot } from "../support/HeraldBin.js"

const tree = fs.mkdtempSync(path.join(os.tmpdir(), "herald-deps-"))
afterAll(() => fs.rmSync(tree, { recursive: true, force: true }))

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(tree, file)), { recursive: true })
  fs.writeFileSync(path.join(tree, file), text)
}

const cruise = (...roots: ReadonlyArray<string>) => {
  const run = spawnSync(
    process.execPath,
    [
      path.join(repoRoot, "node_modules/dependency-cruiser/bin/dependency-cruise.mjs"),
      ...roots,
      "--config",
      path.join(repoRoot, ".dependency-cruiser.cjs"),
      "--output-type",
      "err"
    ],
    { cwd: tree, encoding: "utf8" }
  )
  return { status: run.status, output: `${run.stdout}${run.stderr}` }
}

fs.copyFileSync(path.join(repoRoot, "tsconfig.base.json"), path.join(tree, "tsconfig.base.json"))
write("packages/core/src/posts/Post.ts", `import { id } from "../kernel/Ids.js"\nexport const post = id\n`)
write("packages/core/src/kernel/Ids.ts", `export const id = 1\n`)

describe("dependency rules", () => {
  it("pass a tree that imports downward only", () => {
    const run = cruise("packages")
    expect(run.output).toContain("no dependency violations found")
    expect(run.status).toBe(0)
  })

  it("fail an upward import between core's layers, naming the layer", () => {
    write("packages/core/src/kernel/Upward.ts", `import { post } from "../posts/Post.js"\nexport const up = post\n`)
    try {
      const run = cruise("packages")
      expect(run.status).not.toBe(0)
      expect(run.output).toContain(
        "core-layer-kernel: packages/core/src/kernel/Upward.ts → packages/core/src/posts/Post.ts"
      )
    } finally {
      fs.rmSync(path.join(tree, "packages/core/src/kernel/Upward.ts"))
    }
  })

  it("fail I/O in core and an import against the packages' direction", () => {
    write("packages/core/src/kernel/Disk.ts", `import * as fs from "node:fs"\nexport const read = fs.readFileSync\n`)
    write("packages/adapters/src/Store.ts", `export const store = 1\n`)
    write(
      "packages/core/src/kernel/Reach.ts",
      `import { store } from "../../../adapters/src/Store.js"\nexport const reach = store\n`
    )
    try {
      const run = cruise("packages")
      expect(run.status).not.toBe(0)
      expect(run.output).toContain("core-no-io: packages/core/src/kernel/Disk.ts → fs")
      expect(run.output).toContain(
        "packages-one-way: packages/core/src/kernel/Reach.ts → packages/adapters/src/Store.ts"
      )
    } finally {
      for (
        const file of [
          "packages/core/src/kernel/Disk.ts",
          "packages/core/src/kernel/Reach.ts",
          "packages/adapters/src/Store.ts"
        ]
      ) {
        fs.rmSync(path.join(tree, file))
      }
    }
  })

  it("fail a cycle between core modules, and an import of another folder's internal module", () => {
    write("packages/core/src/posts/A.ts", `import { b } from "./B.js"\nexport const a = () => b\n`)
    write("packages/core/src/posts/B.ts", `import { a } from "./A.js"\nexport const b = () => a\n`)
    write("packages/core/src/media/internal/Rows.ts", `export const rows = 1\n`)
    write(
      "packages/core/src/media/Library.ts",
      `import { rows } from "./internal/Rows.js"\nexport const library = rows\n`
    )
    write(
      "packages/core/src/posts/Reach.ts",
      `import { rows } from "../media/internal/Rows.js"\nexport const reach = rows\n`
    )
    try {
      const run = cruise("packages")
      expect(run.status).not.toBe(0)
      expect(run.output).toContain("core-no-cycle: packages/core/src/posts/A.ts")
      expect(run.output).toContain(
        "core-internal-private: packages/core/src/posts/Reach.ts → packages/core/src/media/internal/Rows.ts"
      )
      expect(run.output).not.toContain("packages/core/src/media/Library.ts →")
    } finally {
      for (
        const file of [
          "packages/core/src/posts/A.ts",
          "packages/core/src/posts/B.ts",
          "packages/core/src/media/internal/Rows.ts",
          "packages/core/src/media/Library.ts",
          "packages/core/src/posts/Reach.ts"
        ]
      ) {
        fs.rmSync(path.join(tree, file))
      }
    }
  })
})
