/**
 * `POST /ai/generate-caption` and `POST /ai/generate-image` over real HTTP, on SQLite and (where one
 * answers) Postgres, against three `herald serve` children each:
 *
 * - `--sandbox` with no provider: the deterministic sandbox generator, labelled `provider: "sandbox"`;
 *   defaults, round trip, platform limits, validation, scope, the image as a ready medium usable in
 *   `media_ids` at once (event media.uploaded), monthly credits by plan with 402
 *   `insufficient_credits` (nothing charged), `/me` used and remaining, and concurrent requests that
 *   never take an organization past its allowance.
 * - pointed at a loopback OpenAI-compatible fake: real provider answers, over-long captions trimmed,
 *   400 `prompt_rejected` for the safety filter (error code and finish_reason), 500
 *   `generation_failed` (retryable) for 429/5xx and an unusable image, nothing charged on any failure,
 *   and the provider key never in the server's output.
 * - neither: 400 `misconfig`, nothing charged.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as OpenAiFake from "../../packages/adapters/test/ai/fakes/OpenAiFake.js"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import * as HeraldServer from "../support/HeraldServer.js"
import { validate } from "../support/JsonSchema.js"
import * as TextCounting from "@herald/core/platforms/TextCounting"
import * as TextLimits from "@herald/core/platforms/TextLimits"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] AI conformance on Postgres skipped: ${pg.reason}`)

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are read field by field, as a client would
type Json = Record<string, any>

const noProvider = { HERALD_AI_BASE_URL: "", HERALD_AI_API_KEY: "" }
const roomyLimits = { HERALD_RATE_LIMIT_PER_MINUTE: "100000", HERALD_RATE_LIMIT_PER_HOUR: "100000" }

const body = (res: HeraldServer.Response): Json => res.json as Json

const aiCredits = async (server: HeraldServer.HeraldServer, key?: string) => {
  const me = await server.request("GET", "/api/v1/me", key === undefined ? {} : { key })
  expect(me.status, me.text).toBe(200)
  return body(me).data.usage.ai_credits as { used: number; limit: number; remaining: number }
}

/** A new organization on `plan` and a key for it with the given scopes. */
const orgWithKey = async (server: HeraldServer.HeraldServer, plan: string, scopes = ["read", "write", "ai"]) => {
  const orgId = await server.createOrg({
    name: `AI ${plan} ${Math.random().toString(36).slice(2, 8)}`,
    plan,
    status: "active"
  })
  return server.createKey({ org: orgId, scopes })
}

const caption = (server: HeraldServer.HeraldServer, payload: unknown, key?: string) =>
  server.request("POST", "/api/v1/ai/generate-caption", { body: payload, ...(key === undefined ? {} : { key }) })

const image = (server: HeraldServer.HeraldServer, payload: unknown, key?: string) =>
  server.request("POST", "/api/v1/ai/generate-image", { body: payload, ...(key === undefined ? {} : { key }) })

const expectError = (res: HeraldServer.Response, status: number, code: string) => {
  expect([res.status, body(res)?.error?.code], res.text).toEqual([status, code])
  expect(body(res).data).toBeNull()
}

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("AI on $label", ({ postgres, skip }) => {
  describe("sandbox", () => {
    let server: HeraldServer.HeraldServer

    beforeAll(async () => {
      if (skip) return
      server = await HeraldServer.start({ postgres, args: ["--sandbox"], env: { ...noProvider, ...roomyLimits } })
    }, 120_000)
    afterAll(async () => {
      await server?.stop()
    })

    it.skipIf(skip)(
      "captions: defaults, round trip, labelled sandbox output, 1 credit each, /me used and remaining",
      async () => {
        const key = await orgWithKey(server, "starter")
        const res = await caption(server, { topic: "Our new oat-milk latte", platform: "x" }, key)
        expect(res.status, res.text).toBe(200)
        const data = body(res).data
        expect(data).toMatchObject({
          topic: "Our new oat-milk latte",
          platform: "x",
          tone: "professional",
          length: "medium",
          include_hashtags: true,
          include_emojis: false,
          count: 3,
          provider: "sandbox",
          sandbox: true,
          credits_charged: 3,
          credits: { used: 3, limit: 25, remaining: 22 }
        })
        expect(data.captions).toHaveLength(3)
        expect(data.captions).toEqual(data.variants.map((v: Json) => v.text))
        for (const v of data.variants) {
          expect(v).toMatchObject({ limit: 280, unit: "weighted_characters", trimmed: false })
          expect(v.length).toBe(TextCounting.xWeightedLength(v.text))
          expect(v.text).toContain("#")
        }
        expect(Date.parse(data.credits.reset_at)).toBeGreaterThan(Date.now())
        expect(await aiCredits(server, key)).toEqual({ used: 3, limit: 25, remaining: 22 })

        // Deterministic: the same request gives the same captions.
        const again = await caption(server, { topic: "Our new oat-milk latte", platform: "x" }, key)
        expect(body(again).data.captions).toEqual(data.captions)
        expect(body(again).data.credits.used).toBe(6)

        const one = await caption(server, {
          topic: "Our new oat-milk latte",
          tone: "witty",
          length: "short",
          include_hashtags: false,
          include_emojis: true,
          count: 1
        }, key)
        expect(one.status, one.text).toBe(200)
        expect(body(one).data).toMatchObject({ platform: null, count: 1, credits_charged: 1, tone: "witty" })
        expect(body(one).data.captions[0]).not.toContain("#")
        expect(body(one).data.variants[0]).toMatchObject({ limit: 2200, unit: "characters" })

        // GET /analytics/summary reports the credits used in the period, from the same ledger.
        const summary = await server.request("GET", "/api/v1/analytics/summary?period=today", { key })
        expect(summary.status, summary.text).toBe(200)
        expect(body(summary).data.ai_credits_used).toBe(7)
        const yesterday = new Date(Date.now() - 86_400_000).toISOString()
        const before = await server.request(
          "GET",
          `/api/v1/analytics/summary?period=custom&from=2026-01-01T00:00:00Z&to=${yesterday}`,
          { key }
        )
        expect(body(before).data.ai_credits_used).toBe(0)
      }
    )

    it.skipIf(skip)("captions fit every platform's limit, counted as for posts (trimmed where needed)", async () => {
      const key = await orgWithKey(server, "scale")
      const topic = "a very long topic ".repeat(50).trim()
      for (const platform of ["tiktok", "x", "bluesky", "threads", "pinterest"] as const) {
        const res = await caption(server, { topic, platform, length: "long", count: 2 }, key)
        expect(res.status, res.text).toBe(200)
        for (const v of body(res).data.variants) {
          for (const limit of TextLimits.textLimits(platform, true)) {
            expect(limit.count(v.text)).toBeLessThanOrEqual(limit.limit)
          }
          expect(v.trimmed).toBe(true)
          expect(v.text.endsWith("…")).toBe(true)
        }
      }
    })

    it.skipIf(skip)("bad bodies: 400 with the spec's codes, nothing charged", async () => {
      const key = await orgWithKey(server, "lite")
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [{}, "topic"],
        [{ topic: "   " }, "topic"],
        [{ topic: "x".repeat(1001) }, "topic"],
        [{ topic: "t", count: 0 }, "count"],
        [{ topic: "t", count: 6 }, "count"],
        [{ topic: "t", count: 2.5 }, "count"],
        [{ topic: "t", tone: "angry" }, "tone"],
        [{ topic: "t", length: "huge" }, "length"],
        [{ topic: "t", platform: "myspace" }, "platform"],
        [{ topic: "t", include_hashtags: "yes" }, "include_hashtags"]
      ]
      for (const [payload, path] of cases) {
        const res = await caption(server, payload, key)
        expectError(res, 400, "validation_error")
        expect(body(res).error.details.validation_errors.map((e: Json) => e.path), res.text).toContain(path)
      }
      const imageCases: ReadonlyArray<readonly [unknown, string]> = [
        [{}, "prompt"],
        [{ prompt: "p".repeat(2001) }, "prompt"],
        [{ prompt: "p", aspect_ratio: "2:1" }, "aspect_ratio"],
        [{ prompt: "p", model: "ultra" }, "model"]
      ]
      for (const [payload, path] of imageCases) {
        const res = await image(server, payload, key)
        expectError(res, 400, "validation_error")
        expect(body(res).error.details.validation_errors.map((e: Json) => e.path), res.text).toContain(path)
      }
      const malformed = await server.request("POST", "/api/v1/ai/generate-caption", { key, rawBody: "{nope" })
      expectError(malformed, 400, "invalid_json")
      expect(await aiCredits(server, key)).toEqual({ used: 0, limit: 10, remaining: 10 })
    })

    it.skipIf(skip)("a key without the ai scope gets 403 insufficient_scope", async () => {
      const key = await orgWithKey(server, "starter", ["read", "write"])
      for (const res of [await caption(server, { topic: "t" }, key), await image(server, { prompt: "p" }, key)]) {
        expectError(res, 403, "insufficient_scope")
        expect(body(res).error.details.required_scope).toBe("ai")
      }
    })

    it.skipIf(skip)(
      "images: a real PNG of the ratio, a ready medium usable in media_ids at once, media.uploaded, credits per model",
      async () => {
        const key = await orgWithKey(server, "growth")
        const res = await image(server, { prompt: "A lighthouse at dawn", aspect_ratio: "16:9" }, key)
        expect(res.status, res.text).toBe(201)
        const data = body(res).data
        expect(data).toMatchObject({
          media_id: data.id,
          status: "ready",
          type: "image",
          mime_type: "image/png",
          width: 320,
          height: 180,
          prompt: "A lighthouse at dawn",
          aspect_ratio: "16:9",
          model: "standard",
          provider: "sandbox",
          sandbox: true,
          credits_charged: 2,
          credits: { used: 2, limit: 100, remaining: 98 }
        })
        expect(data.filename).toMatch(/^ai-image-[0-9a-f]{8}\.png$/)
        const got = await server.request("GET", `/api/v1/media/${data.id}`, { key })
        expect(body(got).data).toMatchObject({ id: data.id, status: "ready", size: data.size, width: 320, height: 180 })

        const hd = await image(server, { prompt: "A lighthouse at dawn", aspect_ratio: "4:5", model: "hd" }, key)
        expect(hd.status, hd.text).toBe(201)
        expect(body(hd).data).toMatchObject({
          width: 256,
          height: 320,
          model: "hd",
          credits_charged: 4,
          credits: { used: 6 }
        })

        // Usable in media_ids at once, on the default organization's sandbox account.
        const own = await image(server, { prompt: "For a post", aspect_ratio: "1:1" })
        expect(own.status, own.text).toBe(201)
        const accounts = body(await server.request("GET", "/api/v1/accounts")).data.accounts as Array<Json>
        const bluesky = accounts.find((a) => a.platform === "bluesky")!
        const post = await server.request("POST", "/api/v1/posts", {
          body: {
            content: "Generated picture",
            account_ids: [bluesky.id],
            scheduled_for: new Date(Date.now() + 3_600_000).toISOString(),
            media_ids: [body(own).data.id]
          }
        })
        expect(post.status, post.text).toBe(201)
        expect(body(post).data.media_ids).toEqual([body(own).data.id])

        const events = await server.withStore(
          Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            return yield* sql<
              { type: string; data: string }
            >`SELECT type, data FROM events WHERE type = 'media.uploaded'`
          }).pipe(Effect.orDie)
        )
        const uploaded = events.map((e) => JSON.parse(e.data) as Json)
        expect(uploaded.map((d) => d.media_id)).toEqual(
          expect.arrayContaining([data.id, body(hd).data.id, body(own).data.id])
        )
        expect(uploaded.find((d) => d.media_id === data.id)).toMatchObject({
          status: "ready",
          mime_type: "image/png",
          width: 320
        })
      }
    )

    it.skipIf(skip)(
      "credits run out: 402 insufficient_credits with details, nothing charged; the trial gets Starter's 25",
      async () => {
        const key = await orgWithKey(server, "lite")
        expect((await caption(server, { topic: "one", count: 5 }, key)).status).toBe(200)
        expect((await caption(server, { topic: "two", count: 4 }, key)).status).toBe(200)
        const tooMany = await caption(server, { topic: "three", count: 2 }, key)
        expectError(tooMany, 402, "insufficient_credits")
        expect(body(tooMany).error.retryable).toBe(false)
        expect(body(tooMany).error.details).toMatchObject({ required: 2, used: 9, limit: 10, remaining: 1 })
        const noImage = await image(server, { prompt: "p" }, key)
        expectError(noImage, 402, "insufficient_credits")
        expect(await aiCredits(server, key)).toEqual({ used: 9, limit: 10, remaining: 1 })
        expect((await caption(server, { topic: "last", count: 1 }, key)).status).toBe(200)
        expectError(await caption(server, { topic: "more", count: 1 }, key), 402, "insufficient_credits")
        expect(await aiCredits(server, key)).toEqual({ used: 10, limit: 10, remaining: 0 })

        // The sandbox's own organization is moved to a plan that holds its accounts: a new trial it is.
        const trial = await aiCredits(server, await orgWithKey(server, "trial"))
        expect(trial.limit).toBe(25)
      }
    )

    it.skipIf(skip)("concurrent requests never take an organization past its allowance", async () => {
      const key = await orgWithKey(server, "lite")
      const answers = await Promise.all(
        Array.from({ length: 16 }, (_, i) => caption(server, { topic: `burst ${i}`, count: 1 }, key))
      )
      const statuses = answers.map((r) => r.status).sort()
      expect(statuses.filter((s) => s === 200)).toHaveLength(10)
      expect(statuses.filter((s) => s === 402)).toHaveLength(6)
      expect(await aiCredits(server, key)).toEqual({ used: 10, limit: 10, remaining: 0 })
    })

    it.skipIf(skip)("answers match the OpenAPI document", async () => {
      type Doc = {
        readonly paths: Record<
          string,
          Record<string, {
            readonly responses: Record<string, { readonly content: Record<string, { readonly schema: unknown }> }>
          }>
        >
      }
      const doc = (await server.request("GET", "/api/v1/openapi.json", { key: null })).json as Doc
      const conforms = (p: string, res: HeraldServer.Response) => {
        const response = doc.paths[p]?.["post"]?.responses[String(res.status)]
        expect(response, `POST ${p} documents ${res.status}`).toBeDefined()
        expect(validate(doc as never, response!.content["application/json"]!.schema, res.json)).toEqual([])
      }
      const key = await orgWithKey(server, "lite")
      conforms("/api/v1/ai/generate-caption", await caption(server, { topic: "docs", count: 5 }, key))
      conforms("/api/v1/ai/generate-image", await image(server, { prompt: "docs" }, key))
      conforms("/api/v1/ai/generate-caption", await caption(server, { topic: "docs", count: 5 }, key))
      conforms("/api/v1/ai/generate-caption", await caption(server, { topic: "" }, key))
    })
  })

  describe("OpenAI-compatible provider (loopback fake)", () => {
    let server: HeraldServer.HeraldServer
    let fake: OpenAiFake.OpenAiFake

    beforeAll(async () => {
      if (skip) return
      fake = await OpenAiFake.start()
      server = await HeraldServer.start({
        postgres,
        env: {
          ...roomyLimits,
          HERALD_AI_BASE_URL: fake.url,
          HERALD_AI_API_KEY: OpenAiFake.apiKey,
          HERALD_AI_CAPTION_MODEL: "fake-chat",
          HERALD_AI_IMAGE_MODEL: "fake-image",
          HERALD_AI_TIMEOUT_SECONDS: "10"
        }
      })
    }, 120_000)
    afterAll(async () => {
      await server?.stop()
      await fake?.close()
    })

    it.skipIf(skip)("captions from the provider; over-long ones trimmed to the platform's limit", async () => {
      const key = await orgWithKey(server, "growth")
      const res = await caption(server, { topic: "Spring sale", platform: "instagram", count: 2 }, key)
      expect(res.status, res.text).toBe(200)
      expect(body(res).data).toMatchObject({
        captions: ["Caption 1 about Spring sale #Fake", "Caption 2 about Spring sale #Fake"],
        provider: "openai-compatible",
        sandbox: false,
        model: "fake-chat",
        credits_charged: 2
      })
      const long = await caption(server, { topic: "LONG", platform: "x", count: 3 }, key)
      expect(long.status, long.text).toBe(200)
      for (const v of body(long).data.variants) {
        expect(TextCounting.xWeightedLength(v.text)).toBeLessThanOrEqual(280)
        expect(v.trimmed).toBe(true)
      }
      expect(await aiCredits(server, key)).toMatchObject({ used: 5 })
    })

    it.skipIf(skip)(
      "the safety filter is 400 prompt_rejected, provider failures 500 generation_failed (retryable); nothing charged",
      async () => {
        const key = await orgWithKey(server, "growth")
        for (const topic of ["REJECT this", "FILTER this"]) {
          const res = await caption(server, { topic }, key)
          expectError(res, 400, "prompt_rejected")
          expect(body(res).error.retryable).toBe(false)
        }
        for (const topic of ["RATELIMIT", "BROKEN"]) {
          const res = await caption(server, { topic }, key)
          expectError(res, 500, "generation_failed")
          expect(body(res).error.retryable).toBe(true)
        }
        expectError(await image(server, { prompt: "REJECT" }, key), 400, "prompt_rejected")
        expectError(await image(server, { prompt: "BROKEN" }, key), 500, "generation_failed")
        expectError(await image(server, { prompt: "NOTIMAGE" }, key), 500, "generation_failed")
        expect(await aiCredits(server, key)).toEqual({ used: 0, limit: 100, remaining: 100 })
        const media = await server.request("GET", "/api/v1/media", { key })
        expect(body(media).data.pagination.total).toBe(0)
      }
    )

    it.skipIf(skip)("images from the provider become ready media at the ratio's size", async () => {
      const key = await orgWithKey(server, "growth")
      const res = await image(server, { prompt: "A calm sea", aspect_ratio: "16:9", model: "hd" }, key)
      expect(res.status, res.text).toBe(201)
      expect(body(res).data).toMatchObject({
        status: "ready",
        mime_type: "image/png",
        width: 1024,
        height: 576,
        model: "hd",
        provider: "openai-compatible",
        provider_model: "fake-image",
        sandbox: false,
        credits_charged: 4
      })
      const sent = fake.requests.filter((r) => r.path === "/v1/images/generations").at(-1)!
      expect(sent.json).toMatchObject({ prompt: "A calm sea", size: "1024x576", response_format: "b64_json" })
      const got = await server.request("GET", `/api/v1/media/${body(res).data.id}`, { key })
      expect(body(got).data.status).toBe("ready")
    })

    it.skipIf(skip)("the provider key never appears in the server's output", () => {
      expect(server.output()).not.toContain(OpenAiFake.apiKey)
      expect(server.output()).not.toContain(OpenAiFake.apiKey.slice(-8))
    })
  })

  describe("no provider", () => {
    let server: HeraldServer.HeraldServer

    beforeAll(async () => {
      if (skip) return
      server = await HeraldServer.start({ postgres, env: { ...noProvider, ...roomyLimits } })
    }, 120_000)
    afterAll(async () => {
      await server?.stop()
    })

    it.skipIf(skip)("400 misconfig for both routes, nothing charged; validation first", async () => {
      const caps = await caption(server, { topic: "hello" })
      expectError(caps, 400, "misconfig")
      expect(body(caps).error.message).toContain("HERALD_AI_BASE_URL")
      expectError(await image(server, { prompt: "hello" }), 400, "misconfig")
      expect(await aiCredits(server)).toEqual({ used: 0, limit: 25, remaining: 25 })
      // Validation still comes first.
      expectError(await caption(server, {}), 400, "validation_error")
    })
  })
})
