/**
 * `HERALD_LOG_FORMAT=json`: `herald serve` writes one JSON object per line on stderr (timestamp, level,
 * message, then its annotations: the request id on request lines, the post, destination and platform
 * on a publish's lines), and no credential sent to it (an API key, passwords, a set-password token, a
 * bot token, a token in a query string) ever appears in what it writes.
 */
import * as crypto from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as HeraldServer from "../support/HeraldServer.js"

const secret = (label: string) => `${label}-${crypto.randomBytes(12).toString("hex")}`
const secrets = {
  apiKey: `pe_live_${crypto.randomBytes(16).toString("hex")}`,
  password: secret("password"),
  setPasswordToken: secret("set-password-token"),
  newPassword: secret("new-password"),
  botToken: `123456:${secret("bot-token")}`,
  invalidBotToken: `654321:${secret("bot-token")}`,
  queryToken: secret("query-token")
}

let server: HeraldServer.HeraldServer
beforeAll(async () => {
  server = await HeraldServer.start({ args: ["--sandbox"], env: { HERALD_LOG_FORMAT: "json" } })
})
afterAll(() => server?.stop())

interface Line {
  readonly timestamp: string
  readonly level: string
  readonly message: string
  readonly [key: string]: unknown
}

const until = async (what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const lines = (): Array<Line> =>
  server.errors().split("\n").filter((l) => l.trim() !== "").map((l) => {
    const parsed: unknown = JSON.parse(l)
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error(`not an object: ${l}`)
    return parsed as Line
  })

describe("HERALD_LOG_FORMAT=json", () => {
  it("one JSON object per line, with the request id and a publish's ids; no credential ever written", async () => {
    // Credentials in every place a request carries them.
    expect((await server.request("GET", "/api/v1/me", { key: secrets.apiKey })).status).toBe(401)
    const signIn = await server.request("POST", "/dashboard/api/session", {
      key: null,
      body: { email: "owner@localhost", password: secrets.password }
    })
    expect(signIn.status).toBe(401)
    const setPassword = await server.request("POST", "/dashboard/api/password", {
      key: null,
      body: { token: secrets.setPasswordToken, password: secrets.newPassword }
    })
    expect(setPassword.status).toBeGreaterThanOrEqual(400)
    const invalid = await server.request("POST", "/api/v1/accounts/connect-credential", {
      body: { platform: "telegram", bot_token: secrets.invalidBotToken, channel: true }
    })
    expect(invalid.status).toBe(400)
    const connected = await server.request("POST", "/api/v1/accounts/connect-credential", {
      body: { platform: "telegram", bot_token: secrets.botToken, channel: "@herald_logs" }
    })
    expect(connected.status).toBeLessThan(500)
    expect((await server.request("GET", `/api/v1/posts?access_token=${secrets.queryToken}`)).status).toBe(200)

    // A publish, whose lines carry its ids.
    const accounts = (await server.request("GET", "/api/v1/accounts")).json as {
      data: { accounts: Array<{ id: number; platform: string }> }
    }
    const x = accounts.data.accounts.find((a) => a.platform === "x")!
    const created = await server.request("POST", "/api/v1/posts", {
      body: { content: "Logged as JSON", account_ids: [x.id] }
    })
    expect(created.status).toBe(201)
    const postId = (created.json as { data: { id: string } }).data.id
    await until(
      "the publish line",
      () => lines().some((l) => l.message === "Dispatcher: published" && l["post_id"] === postId)
    )
    // The lines of a turn of the event loop are written at its end.
    await until("the query's request line", () => lines().some((l) => l.message.startsWith("GET /api/v1/posts 200")))

    const all = lines()
    for (const line of all) {
      expect(typeof line.message).toBe("string")
      expect(["debug", "info", "warning", "error", "fatal"]).toContain(line.level)
      expect(new Date(line.timestamp).toISOString()).toBe(line.timestamp)
    }
    const requestLines = all.filter((l) => /^(GET|POST) \//.test(l.message))
    expect(requestLines.length).toBeGreaterThanOrEqual(8)
    for (const line of requestLines) {
      expect(line["request_id"]).toMatch(/^[0-9a-f-]{36}$/)
      expect(typeof line["duration_ms"]).toBe("number")
    }
    expect(requestLines.find((l) => l.message === "POST /api/v1/posts 201")?.["post_id"]).toBe(postId)
    const published = all.find((l) => l.message === "Dispatcher: published" && l["post_id"] === postId)!
    expect(published).toMatchObject({ level: "info", platform: "x", attempt: 1 })
    expect(published["destination_id"]).toMatch(/^[0-9a-f-]{36}$/)

    const output = server.output()
    for (const [name, value] of Object.entries(secrets)) expect([name, output.includes(value)]).toEqual([name, false])
  })
})
