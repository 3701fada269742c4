/**
 * Configuration checked at start: `herald serve` and `herald worker` refuse a wrong
 * environment variable before listening or claiming, with one line per wrong variable on stderr and
 * exit code 2, and never echo a secret's value.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { herald } from "../support/HeraldServer.js"

const work = fs.mkdtempSync(path.join(os.tmpdir(), "herald-config-"))
afterAll(() => fs.rmSync(work, { recursive: true, force: true }))

/** The store arguments of a data dir of its own, and an environment with no store variables. */
const store = (name: string) => ["--data-dir", path.join(work, name)]
const baseEnv = { PORT: "", HERALD_DATA_DIR: "", HERALD_DATABASE_URL: "" }

const lines = (stderr: string) => stderr.split("\n").filter((l) => l !== "").sort()

describe("configuration at start", () => {
  it("herald serve with two bad variables: exit 2, exactly one line for each, nothing listens", async () => {
    const result = await herald(["serve", "--port", "0", ...store("serve")], {
      ...baseEnv,
      HERALD_RATE_LIMIT_PER_MINUTE: "abc",
      HERALD_HOUSEKEEPING_MINUTES: "-5"
    })
    expect(result.code).toBe(2)
    expect(lines(result.stderr)).toEqual([
      "HERALD_HOUSEKEEPING_MINUTES: expected a positive number, got '-5'",
      "HERALD_RATE_LIMIT_PER_MINUTE: expected a non-negative integer, got 'abc'"
    ])
    expect(result.stdout).not.toContain("Herald listening")
    // Refused before the store was opened: nothing was created.
    expect(fs.existsSync(path.join(work, "serve", "herald.db"))).toBe(false)
  }, 60_000)

  it("herald serve refuses a reader thread count that is not a non-negative integer", async () => {
    const result = await herald(["serve", "--port", "0", ...store("readers")], {
      ...baseEnv,
      HERALD_SQLITE_READERS: "two"
    })
    expect(result.code).toBe(2)
    expect(lines(result.stderr)).toEqual(["HERALD_SQLITE_READERS: expected a non-negative integer, got 'two'"])
    expect(fs.existsSync(path.join(work, "readers", "herald.db"))).toBe(false)
  }, 60_000)

  // PORT is wrong too, but --port overrides it, so it is not read and not reported.
  it("never prints a secret's value, only its name", async () => {
    const result = await herald(["serve", "--port", "0", ...store("secret")], {
      ...baseEnv,
      HERALD_DATABASE_URL: "mysql://admin:hunter2-secret@db.example/herald",
      PORT: "99999"
    })
    expect(result.code).toBe(2)
    expect(lines(result.stderr)).toEqual([
      "HERALD_DATABASE_URL: expected a postgres:// URL (value not shown)"
    ])
    expect(result.stderr + result.stdout).not.toContain("hunter2")
  }, 60_000)

  it("herald worker checks the same variables", async () => {
    const result = await herald(["worker", ...store("worker")], {
      ...baseEnv,
      HERALD_METRICS_SCHEDULE: "1h,soon",
      HERALD_PUBLIC_URL: "herald.example.com",
      HERALD_WEBHOOKS_ALLOW_PRIVATE: "yes"
    })
    expect(result.code).toBe(2)
    expect(lines(result.stderr)).toEqual([
      "HERALD_METRICS_SCHEDULE: expected comma-separated durations such as 1h,6h,1d, got '1h,soon'",
      "HERALD_PUBLIC_URL: expected an http(s) URL, got 'herald.example.com'",
      "HERALD_WEBHOOKS_ALLOW_PRIVATE: expected true or false, got 'yes'"
    ])
  }, 60_000)

  it(
    "notification e-mail: an SMTP URL that is not one is refused without its password; HERALD_MAIL_FROM is required with it",
    async () => {
      const wrong = await herald(["serve", "--port", "0", ...store("smtp-wrong")], {
        ...baseEnv,
        HERALD_SMTP_URL: "https://mailer:smtp-pa55word@mail.example.com",
        HERALD_MAIL_FROM: "Herald <herald@example.com>"
      })
      expect(wrong.code).toBe(2)
      expect(lines(wrong.stderr)).toEqual(["HERALD_SMTP_URL: expected an smtp:// or smtps:// URL (value not shown)"])
      expect(wrong.stderr + wrong.stdout).not.toContain("smtp-pa55word")
      const noFrom = await herald(["worker", ...store("smtp-from")], {
        ...baseEnv,
        HERALD_SMTP_URL: "smtp://mailer:smtp-pa55word@mail.example.com:587",
        HERALD_MAIL_FROM: ""
      })
      expect(noFrom.code).toBe(2)
      expect(lines(noFrom.stderr)).toEqual([
        "HERALD_MAIL_FROM: expected the From address of notification e-mails, since HERALD_SMTP_URL is set"
      ])
      expect(noFrom.stderr + noFrom.stdout).not.toContain("smtp-pa55word")
    },
    60_000
  )
})
