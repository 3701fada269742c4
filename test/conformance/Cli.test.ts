/**
 * The `herald` command without a server: migrate, organizations and keys on a fresh data dir, and
 * its answers to wrong usage.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { herald } from "../support/HeraldServer.js"

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-cli-"))
const store = ["--data-dir", dataDir]
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }))

describe("herald command", () => {
  it("migrates a fresh data dir into a SQLite file", async () => {
    const result = await herald(["migrate", ...store])
    expect(result.code).toBe(0)
    expect(fs.existsSync(path.join(dataDir, "herald.db"))).toBe(true)
  })

  it("creates and lists organizations, and keys for them; keys create prints only the key", async () => {
    const none = await herald(["keys", "create", ...store])
    expect(none.code).toBe(1)
    expect(none.stdout).toBe("")
    expect(none.stderr).toContain("No organization")

    const created = await herald(["orgs", "create", "Acme", "--plan", "scale", ...store])
    expect(created.code).toBe(0)
    const orgId = created.stdout.trim()
    expect(orgId).toMatch(/^[0-9a-f-]{36}$/)
    const listed = await herald(["orgs", "list", ...store])
    expect(listed.stdout).toContain(`${orgId}\tscale\tactive`)

    const key = await herald(["keys", "create", "--scopes", "read,ai", "--name", "ci", ...store])
    expect(key.code).toBe(0)
    expect(key.stdout).toMatch(/^pe_live_[0-9a-f]{32}\n$/)
    const keys = await herald(["keys", "list", ...store])
    expect(keys.stdout).toContain("valid\tread,ai\tall-accounts")
    expect(keys.stdout).not.toContain(key.stdout.trim())
  })

  it("answers wrong usage with exit code 2 and the usage text", async () => {
    const bad = await herald(["keys", "create", "--scopes", "admin", ...store])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("scope must be one of read, write, ai")
    const unknown = await herald(["frobnicate", ...store])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("Usage:")
  })
})
