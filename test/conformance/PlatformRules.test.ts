/**
 * GET /platform-rules over real HTTP, on SQLite and Postgres: it publishes exactly the tables POST
 * /posts validates with (compared with core's `ComposerRules`), and a walk over the published rules
 * provokes each of them through POST /posts: every caption limit (at the limit passes, one over is
 * content_too_long with the published limit and unit), every setting with a bad value
 * (validation_error at its path; every enum value accepted), required settings and media, content
 * types, media types, counts and kinds that must stand alone.
 */
import * as ComposerRules from "@herald/core/posts/ComposerRules"
import { platforms } from "@herald/core/domain/Platform"
import type { Platform } from "@herald/core/domain/Platform"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import { insertAccounts } from "../support/AccountFixtures.js"
import * as HeraldServer from "../support/HeraldServer.js"
import { validate } from "../support/JsonSchema.js"
import * as MediaFixtures from "../support/MediaFixtures.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] PlatformRules conformance on Postgres skipped: ${pg.reason}`)

type Rule = ComposerRules.PlatformRule
type Setting = ComposerRules.SettingRule
interface ErrorBody {
  readonly code: string
  readonly message: string
  readonly details: {
    readonly validation_errors?: ReadonlyArray<{ readonly path: string; readonly message: string }>
    readonly [key: string]: unknown
  }
}

const future = () => new Date(Date.now() + 3 * 3600_000).toISOString()

/** Text one over `limit` in its unit, within every other limit of the platform. */
const overLimit = (rule: Rule, limit: ComposerRules.TextLimitRule): string => {
  const graphemeCap = rule.caption.limits.find((l) => l.unit === "graphemes" && l !== limit)
  if (limit.unit === "bytes" && graphemeCap !== undefined) {
    // A family emoji: one grapheme, 25 UTF-8 bytes.
    const family = "\u{1F468}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466}"
    const n = Math.floor(limit.limit / 25) + 1
    expect(n).toBeLessThanOrEqual(graphemeCap.limit)
    return family.repeat(n)
  }
  return "a".repeat(limit.limit + 1)
}

/** Values a setting must refuse. */
const badValues = (setting: Setting): ReadonlyArray<unknown> => {
  switch (setting.type) {
    case "enum":
      return ["not-a-listed-value", 1]
    case "boolean":
      return ["yes", 1]
    case "string":
      return [
        42,
        ...(setting.max_length === undefined ? [] : ["a".repeat(setting.max_length + 1)]),
        ...(setting.forbidden_characters ?? []).map((c) => `a${c}b`)
      ]
    case "integer":
      return [(setting.minimum ?? 0) - 1, 1.5, "1000"]
    case "string_array":
      return [[1], "tag"]
    case "url":
      return ["not a url", "ftp://example.com/x"]
  }
}

/** A value a setting takes. */
const goodValue = (setting: Setting): unknown => {
  switch (setting.type) {
    case "enum":
      return setting.values![0]
    case "boolean":
      return true
    case "string":
      return "A title"
    case "integer":
      return setting.minimum ?? 0
    case "string_array":
      return ["a"]
    case "url":
      return "https://example.com/page"
  }
}

const requiredSettings = (rule: Rule): Record<string, unknown> =>
  Object.fromEntries(Object.entries(rule.settings).filter(([, s]) => s.required).map(([k, s]) => [k, goodValue(s)]))

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("platform rules on $label", ({ postgres, skip }) => {
  let server: HeraldServer.HeraldServer
  let rules: Readonly<Record<Platform, Rule>>
  const account = {} as Record<Platform, number>
  const media = { jpeg: [] as Array<string>, video: [] as Array<string>, gif: "", pdf: "" }

  const upload = async (filename: string, contentType: string, bytes: Uint8Array): Promise<string> => {
    const presigned = await server.request("POST", "/api/v1/media/upload", {
      body: { filename, content_type: contentType, file_size: bytes.length }
    })
    expect(presigned.status, presigned.text).toBe(201)
    const data = (presigned.json as { data: { id: string; upload_url: string } }).data
    const put = await fetch(data.upload_url, { method: "PUT", headers: { "content-type": contentType }, body: bytes })
    expect(put.status).toBe(200)
    const completed = await server.request("POST", `/api/v1/media/${data.id}/complete`)
    expect(completed.status, completed.text).toBe(200)
    return data.id
  }

  beforeAll(async () => {
    if (skip) return
    server = await HeraldServer.start({
      postgres,
      // A public media origin: Instagram images and Threads media need one at create time.
      env: {
        HERALD_RATE_LIMIT_PER_MINUTE: "100000",
        HERALD_RATE_LIMIT_PER_HOUR: "100000",
        HERALD_MEDIA_PUBLIC_URL: "https://media.herald.test"
      }
    })
    const inserted = await server.withStore(insertAccounts(
      server.orgId,
      platforms.map((p) => ({
        platform: p,
        name: `rules_${p}`
      }))
    ))
    for (const a of inserted) account[a.platform] = a.id
    const res = await server.request("GET", "/api/v1/platform-rules")
    expect(res.status, res.text).toBe(200)
    rules = (res.json as { data: { platforms: Record<Platform, Rule> } }).data.platforms
    // Enough distinct media for every count rule of the table (+1), and one of each other kind.
    const most = Math.max(...Object.values(rules).flatMap((r) => [r.media.max_images ?? 0, r.media.max_items ?? 0])) + 1
    const jpeg = MediaFixtures.jpeg(2, 2)
    for (let i = 0; i < most; i++) media.jpeg.push(await upload(`p${i}.jpg`, "image/jpeg", jpeg))
    for (let i = 0; i < 2; i++) media.video.push(await upload(`v${i}.mp4`, "video/mp4", MediaFixtures.movie()))
    media.gif = await upload("a.gif", "image/gif", MediaFixtures.gif(2, 2))
    media.pdf = await upload("a.pdf", "application/pdf", MediaFixtures.pdf())
  }, 180_000)
  afterAll(async () => {
    await server?.stop()
  })

  const post = (body: Record<string, unknown>) => server.request("POST", "/api/v1/posts", { body })
  const draft = (platform: Platform, body: Record<string, unknown>) =>
    post({ content: "hello", account_ids: [account[platform]], draft: true, ...body })
  const errorOf = (res: HeraldServer.Response): ErrorBody => (res.json as { error: ErrorBody }).error
  const expectValidationAt = (res: HeraldServer.Response, path: string, what: string) => {
    expect(res.status, `${what}: ${res.text}`).toBe(400)
    const error = errorOf(res)
    expect(error.code, what).toBe("validation_error")
    expect(error.details.validation_errors?.map((e) => e.path), what).toContain(path)
  }

  it.skipIf(skip)("publishes every platform, generated from the validator's tables, as the document says", async () => {
    expect(Object.keys(rules).sort()).toEqual([...platforms].sort())
    expect(rules).toEqual(JSON.parse(JSON.stringify(ComposerRules.describeAll())))
    // The spec's numbers, as published.
    expect(rules.x.caption).toMatchObject({ limit: 280, unit: "weighted_characters" })
    expect(rules.bluesky.caption.limits.map((l) => [l.limit, l.unit, l.applies])).toEqual([
      [300, "graphemes", "always"],
      [3000, "bytes", "always"]
    ])
    expect(rules.telegram.caption.limits.map((l) => [l.limit, l.applies])).toEqual([[4096, "text_only"], [
      1024,
      "with_media"
    ]])
    expect(rules.tiktok.settings.privacyLevel).toMatchObject({
      type: "enum",
      required: true,
      values: ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"]
    })
    expect(Object.keys(rules.tiktok.settings)).toEqual(
      expect.arrayContaining(["brandContent", "brandOrganic", "aiGenerated"])
    )
    expect(rules.discord.first_comment_limits).toEqual([{
      limit: 2000,
      unit: "characters",
      applies: "always",
      description: null
    }])
    expect(rules.telegram.first_comment_limits.map((l) => [l.limit, l.unit])).toEqual([[4096, "utf16_units"]])
    expect(rules.tiktok.first_comment_limits).toEqual([])
    expect(rules.youtube.settings.title).toMatchObject({ type: "string", required: true, max_length: 100 })
    expect(rules.instagram.content_types?.map((t) => t.value)).toEqual(["Post", "Reels", "Story", "Trial Reel"])
    expect(rules.instagram.media.required).toMatchObject({ media: "any" })
    expect(rules.youtube.media.required).toMatchObject({ media: "video" })
    expect(platforms.filter((p) => rules[p].threads).sort()).toEqual(["bluesky", "threads", "x"])
    expect(rules.x.first_comment).toBe(true)
    expect(rules.tiktok.first_comment).toBe(false)
    expect(rules.bluesky.media.max_bytes.image).toBe(1_000_000)
    expect(rules.instagram.media.converted_types).toEqual(["image/png", "image/webp"])
    expect(rules.instagram.media.aspect_ratio).toEqual({ min: "4:5", max: "1.91:1" })
    expect(rules.bluesky.media.aspect_ratio).toBeNull()
    expect(rules.x.media.max_video_seconds).toBe(140)
    // TikTok's photo posts take JPEG and WebP: a PNG goes as a JPEG.
    expect(rules.tiktok.media.converted_types).toEqual(["image/png"])
    expect(rules.tiktok.media.required).toEqual({ media: "any", description: "one video or 1 to 35 images" })
    expect(rules.tiktok.media.max_images).toBe(35)
    expect(rules.x.media.max_images).toBe(4)

    const doc = (await server.request("GET", "/api/v1/openapi.json", { key: null })).json as {
      paths: Record<
        string,
        Record<string, { responses: Record<string, { content: Record<string, { schema: unknown }> }> }>
      >
    }
    const res = await server.request("GET", "/api/v1/platform-rules")
    const schema = doc.paths["/api/v1/platform-rules"]?.get?.responses["200"]?.content["application/json"]?.schema
    expect(schema).toBeDefined()
    expect(validate(doc, schema, res.json)).toEqual([])
  })

  it.skipIf(skip)("needs the read scope and a key", async () => {
    const writeOnly = await server.createKey({ scopes: ["write"] })
    const refused = await server.request("GET", "/api/v1/platform-rules", { key: writeOnly })
    expect(refused.status).toBe(403)
    expect(errorOf(refused).code).toBe("insufficient_scope")
    const readOnly = await server.createKey({ scopes: ["read"] })
    expect((await server.request("GET", "/api/v1/platform-rules", { key: readOnly })).status).toBe(200)
    expect((await server.request("GET", "/api/v1/platform-rules", { key: null })).status).toBe(401)
  })

  it.skipIf(skip)(
    "every caption limit: at the limit is accepted, one over is content_too_long with that limit",
    async () => {
      for (const platform of platforms) {
        const rule = rules[platform]
        for (const limit of rule.caption.limits) {
          const withMedia = limit.applies === "with_media" ? { media_ids: [media.jpeg[0]] } : {}
          const what = `${platform} ${limit.limit} ${limit.unit} (${limit.applies})`
          if (limit.unit !== "bytes" || rule.caption.limits.length === 1) {
            const at = await draft(platform, { content: "a".repeat(limit.limit), ...withMedia })
            expect(at.status, `${what} at the limit: ${at.text}`).toBe(201)
          }
          const over = await draft(platform, { content: overLimit(rule, limit), ...withMedia })
          expect(over.status, `${what}: ${over.text}`).toBe(400)
          expect(errorOf(over).code, what).toBe("content_too_long")
          expect(errorOf(over).details, what).toMatchObject({ platform, limit: limit.limit, unit: limit.unit })
        }
      }
    }
  )

  it.skipIf(skip)(
    "every first-comment limit: at the limit is accepted, one over is content_too_long, nothing stored",
    async () => {
      const count = async () =>
        ((await server.request("GET", "/api/v1/posts?limit=100")).json as { data: Array<unknown> }).data.length
      for (const platform of platforms) {
        const rule = rules[platform]
        for (const limit of rule.first_comment_limits) {
          const what = `${platform} first comment ${limit.limit} ${limit.unit}`
          const withComment = (firstComment: string) => ({
            platform_content: { [platform]: { content: "hello", settings: { firstComment } } }
          })
          if (limit.unit !== "bytes" || rule.first_comment_limits.length === 1) {
            const at = await draft(platform, withComment("a".repeat(limit.limit)))
            expect(at.status, `${what} at the limit: ${at.text}`).toBe(201)
          }
          const before = await count()
          const over = await draft(
            platform,
            withComment(overLimit({ ...rule, caption: { ...rule.caption, limits: rule.first_comment_limits } }, limit))
          )
          expect(over.status, `${what}: ${over.text}`).toBe(400)
          expect(errorOf(over).code, what).toBe("content_too_long")
          expect(errorOf(over).details, what).toMatchObject({
            platform,
            limit: limit.limit,
            unit: limit.unit,
            field: `platform_content.${platform}.settings.firstComment`
          })
          expect(await count(), what).toBe(before)
        }
      }
    }
  )

  it.skipIf(skip)(
    "threads: thread posts are held to the caption limit exactly where the table says threads are published",
    async () => {
      for (const platform of platforms) {
        const rule = rules[platform]
        const res = await draft(platform, { threadPosts: [{ content: "a".repeat(rule.caption.limit + 1) }] })
        if (rule.threads) {
          expect(res.status, `${platform}: ${res.text}`).toBe(400)
          expect(errorOf(res).details).toMatchObject({
            platform,
            field: "threadPosts.0.content",
            limit: rule.caption.limit
          })
        } else {
          expect(res.status, `${platform} does not publish threads: ${res.text}`).toBe(201)
        }
      }
    }
  )

  it.skipIf(skip)("text or media: a published post with neither is refused on every platform", async () => {
    for (const platform of platforms) {
      expect(rules[platform].requires_text_or_media).toBe(true)
      const settings = requiredSettings(rules[platform])
      const res = await post({
        content: "",
        account_ids: [account[platform]],
        scheduled_for: future(),
        ...(Object.keys(settings).length === 0 ? {} : { platform_content: { [platform]: { content: "", settings } } })
      })
      const path = Object.keys(settings).length === 0 ? "content" : `platform_content.${platform}.content`
      expectValidationAt(res, path, `${platform} with neither text nor media`)
    }
  })

  it.skipIf(skip)(
    "every setting: each bad value is a validation_error at its path; each enum value is accepted",
    async () => {
      let checked = 0
      for (const platform of platforms) {
        for (const [key, setting] of Object.entries(rules[platform].settings)) {
          const path = `platform_content.${platform}.settings.${key}`
          for (const value of badValues(setting)) {
            const res = await draft(platform, {
              platform_content: { [platform]: { content: "hello", settings: { [key]: value } } }
            })
            expectValidationAt(res, path, `${path} = ${JSON.stringify(value)}`)
            checked++
          }
          for (const value of setting.type === "enum" ? setting.values! : [goodValue(setting)]) {
            const res = await draft(platform, {
              platform_content: { [platform]: { content: "hello", settings: { [key]: value } } }
            })
            expect(res.status, `${path} = ${JSON.stringify(value)}: ${res.text}`).toBe(201)
          }
        }
      }
      expect(checked).toBeGreaterThan(30)
    }
  )

  it.skipIf(skip)("required settings and required media: refused on publish, not on a draft", async () => {
    for (const platform of platforms) {
      const rule = rules[platform]
      for (const [key, setting] of Object.entries(rule.settings).filter(([, s]) => s.required)) {
        const res = await post({
          content: "hello",
          account_ids: [account[platform]],
          scheduled_for: future(),
          media_ids: [media.video[0]]
        })
        expectValidationAt(res, `platform_content.${platform}.settings.${key}`, `${platform} ${key} missing`)
        expect(setting.required).toBe(true)
      }
      const required = rule.media.required
      if (required === null) continue
      const settings = requiredSettings(rule)
      const body = {
        content: "hello",
        account_ids: [account[platform]],
        ...(Object.keys(settings).length === 0
          ? {}
          : { platform_content: { [platform]: { content: "hello", settings } } })
      }
      expectValidationAt(await post({ ...body, scheduled_for: future() }), "media_ids", `${platform} without media`)
      const saved = await post({ ...body, draft: true })
      expect(saved.status, `${platform} draft without media: ${saved.text}`).toBe(201)
      const enough = required.media === "video" ? media.video[0] : media.jpeg[0]
      const published = await post({ ...body, scheduled_for: future(), media_ids: [enough] })
      expect(published.status, `${platform} with media: ${published.text}`).toBe(201)
    }
  })

  it.skipIf(skip)("content types: a listed one is accepted, another is a validation_error", async () => {
    for (const platform of platforms.filter((p) => rules[p].content_types !== null)) {
      for (const type of rules[platform].content_types!) {
        const medium = type.video_only ? media.video[0] : media.jpeg[0]
        const res = await draft(platform, {
          media_ids: [medium],
          platform_content: { [platform]: { content: "hello", contentType: type.value } }
        })
        expect(res.status, `${platform} ${type.value}: ${res.text}`).toBe(201)
        if (type.max_items < media.jpeg.length) {
          const many = media.jpeg.slice(0, type.max_items + 1)
          const over = await draft(platform, {
            media_ids: many,
            platform_content: { [platform]: { content: "hello", contentType: type.value } }
          })
          expectValidationAt(over, "media_ids", `${platform} ${type.value} with ${many.length} media`)
        }
      }
      const res = await draft(platform, {
        platform_content: { [platform]: { content: "hello", contentType: "Carousel" } }
      })
      expectValidationAt(res, `platform_content.${platform}.contentType`, `${platform} contentType Carousel`)
    }
  })

  it.skipIf(skip)(
    "media: types a platform does not take, counts over the limit, kinds that must stand alone",
    async () => {
      const byType: Record<string, string> = {
        "image/jpeg": media.jpeg[0]!,
        "video/mp4": media.video[0]!,
        "image/gif": media.gif,
        "application/pdf": media.pdf
      }
      for (const platform of platforms) {
        const rule = rules[platform].media
        for (const [type, id] of Object.entries(byType)) {
          const res = await draft(platform, { media_ids: [id] })
          if (rule.types.includes(type)) expect(res.status, `${platform} takes ${type}: ${res.text}`).toBe(201)
          else expectValidationAt(res, "media_ids.0", `${platform} refuses ${type}`)
        }
        if (rule.max_images !== null) {
          expect((await draft(platform, { media_ids: media.jpeg.slice(0, rule.max_images) })).status).toBe(201)
          const over = await draft(platform, { media_ids: media.jpeg.slice(0, rule.max_images + 1) })
          expectValidationAt(over, "media_ids", `${platform} ${rule.max_images + 1} images`)
        }
        if (rule.max_items !== null && rules[platform].content_types === null) {
          const pool = rule.types.includes("image/jpeg") ? media.jpeg : media.video
          if (rule.max_items + 1 <= pool.length) {
            expect((await draft(platform, { media_ids: pool.slice(0, rule.max_items) })).status).toBe(201)
            const over = await draft(platform, { media_ids: pool.slice(0, rule.max_items + 1) })
            expectValidationAt(over, "media_ids", `${platform} ${rule.max_items + 1} items`)
          }
        }
        for (const kind of rule.alone) {
          const lone = kind === "video" ? media.video[0] : kind === "gif" ? media.gif : media.pdf
          expect((await draft(platform, { media_ids: [lone] })).status, `${platform} ${kind} alone`).toBe(201)
          const mixed = await draft(platform, { media_ids: [lone, media.jpeg[0]] })
          expectValidationAt(mixed, "media_ids", `${platform} ${kind} with an image`)
        }
        if (rule.documents_apart) {
          expect((await draft(platform, { media_ids: [media.pdf] })).status).toBe(201)
          expectValidationAt(
            await draft(platform, { media_ids: [media.pdf, media.jpeg[0]] }),
            "media_ids",
            `${platform} mixed`
          )
        }
      }
    }
  )
})
