import { describe, expect, it } from "@effect/vitest"
import { DestinationId } from "@herald/core/kernel/Ids"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as PinterestOAuth from "../../src/oauth/Pinterest.js"
import * as Pinterest from "../../src/platforms/Pinterest.js"
import * as PinterestApiFake from "./fakes/PinterestApiFake.js"
import { bytesOf, HttpLive, media, part, request } from "./fixtures.js"

const setup = Effect.gen(function*() {
  const fake = yield* Effect.acquireRelease(
    Effect.promise(() => PinterestApiFake.start()),
    (f) => Effect.promise(() => f.server.close())
  )
  const client = yield* Pinterest.make({ apiUrl: fake.server.url, pollInterval: "5 millis", maxPolls: 10 })
    .pipe(Effect.provide(HttpLive))
  const provider = yield* PinterestOAuth.make({
    clientId: PinterestApiFake.clientId,
    clientSecret: Redacted.make(PinterestApiFake.clientSecret),
    apiUrl: fake.server.url
  }).pipe(Effect.provide(HttpLive))
  return { fake, client, provider }
})

const jpeg = (seed = 1, publicUrl?: string) => {
  const bytes = bytesOf(300, seed)
  return {
    bytes,
    ref: media({ kind: "image", mimeType: "image/jpeg", bytes, ...(publicUrl === undefined ? {} : { publicUrl }) })
  }
}

const video = () => {
  const bytes = bytesOf(5000, 9)
  return { bytes, ref: media({ kind: "video", mimeType: "video/mp4", bytes, filename: "clip.mp4" }) }
}

const pinRequest = (
  credentials: Readonly<Record<string, string>>,
  content: string,
  refs = [jpeg().ref],
  settings: Readonly<Record<string, unknown>> = {}
) => request({ platform: "pinterest", credentials, main: part(content, refs), settings })

const decoded = (data: unknown) => new Uint8Array(Buffer.from(String(data), "base64"))
const same = (a: Uint8Array | undefined, b: Uint8Array) => a !== undefined && Buffer.from(a).equals(Buffer.from(b))

describe("Pinterest adapter against the API v5 fake", () => {
  it.scopedLive("connect lists the boards (every page) and keeps the first as default; refresh keeps it; a pin goes there", () =>
    Effect.gen(function*() {
      const { client, fake, provider } = yield* setup
      fake.boardsPageSize = 2
      const redirectUri = "https://herald.example.com/oauth/callback/pinterest"
      const url = new URL(provider.authorizeUrl({ state: "st", redirectUri, codeChallenge: "unused" }))
      expect(url.searchParams.get("scope")).toBe("boards:read,boards:write,pins:read,pins:write,user_accounts:read")
      const [identity] = yield* provider.exchangeCode({ code: fake.issueCode(), redirectUri, codeVerifier: "unused" })
      expect(identity).toMatchObject({
        platformAccountId: PinterestApiFake.userId,
        accountName: PinterestApiFake.username
      })
      expect(identity!.credentials).toMatchObject({
        default_board_id: "1070096254886001",
        default_board_name: "Recipes"
      })
      const boardCalls = fake.server.requests.filter((r) => r.path === "/v5/boards")
      expect(boardCalls.map((r) => r.query.get("bookmark"))).toEqual([null, "2"])
      expect(boardCalls[0]!.query.get("page_size")).toBe("250")

      const renewed = yield* provider.refresh!(Redacted.make(identity!.credentials))
      expect(renewed.credentials["access_token"]).not.toBe(identity!.credentials["access_token"])
      expect(renewed.credentials["refresh_token"]).toBe(identity!.credentials["refresh_token"])
      expect(renewed.credentials["default_board_id"]).toBe("1070096254886001")

      const result = yield* client.publish(pinRequest(renewed.credentials, "Best bread"))
      expect(fake.pins[0]!.body["board_id"]).toBe("1070096254886001")
      expect(result).toEqual({
        platformPostId: fake.pins[0]!.id,
        platformPostUrl: `https://www.pinterest.com/pin/${fake.pins[0]!.id}/`
      })
    }))

  it.scopedLive("no board anywhere: a clear error; once the account has a board, it is found on demand", () =>
    Effect.gen(function*() {
      const { client, fake, provider } = yield* setup
      const boards = fake.boards
      fake.boards = []
      const [identity] = yield* provider.exchangeCode({
        code: fake.issueCode(),
        redirectUri: "https://h.example/cb",
        codeVerifier: ""
      })
      expect(identity!.credentials["default_board_id"]).toBeUndefined()
      const error = yield* Effect.flip(client.publish(pinRequest(identity!.credentials, "x")))
      expect(error.kind).toBe("permanent")
      expect(error.message).toContain("no board")
      expect(error.message).toContain("settings.boardId")
      expect(fake.pins).toHaveLength(0)

      fake.boards = boards.slice(1)
      yield* client.publish(pinRequest(identity!.credentials, "y"))
      expect(fake.pins[0]!.body["board_id"]).toBe("1070096254886002")
    }))

  it.scopedLive("one uploaded image: image_base64 with the description, settings.boardId, title and link", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const image = jpeg(3)
      yield* client.publish(pinRequest(
        { access_token: fake.accessToken, default_board_id: "1070096254886001" },
        "Weeknight pasta",
        [image.ref],
        { boardId: "1070096254886003", title: "Pasta", link: "https://example.com/pasta" }
      ))
      const body = fake.pins[0]!.body
      expect(body).toMatchObject({
        board_id: "1070096254886003",
        description: "Weeknight pasta",
        title: "Pasta",
        link: "https://example.com/pasta",
        media_source: { source_type: "image_base64", content_type: "image/jpeg" }
      })
      expect(same(decoded((body["media_source"] as { data: string }).data), image.bytes)).toBe(true)
    }))

  it.scopedLive("alt text: the pin's alt_text is its first medium's", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      yield* client.publish(pinRequest(
        { access_token: fake.accessToken, default_board_id: "1070096254886001" },
        "Weeknight pasta",
        [{ ...jpeg(3).ref, altText: "A bowl of pasta" }]
      ))
      expect(fake.pins[0]!.body["alt_text"]).toBe("A bowl of pasta")
    }))

  it.scopedLive("public URLs are passed as image_url / multiple_image_urls; 2–5 uploads are multiple_image_base64", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const creds = { access_token: fake.accessToken, default_board_id: "1070096254886001" }
      yield* client.publish(pinRequest(creds, "one", [jpeg(1, "https://cdn.example.com/a.jpg").ref]))
      expect(fake.pins[0]!.body["media_source"]).toEqual({
        source_type: "image_url",
        url: "https://cdn.example.com/a.jpg"
      })

      yield* client.publish(pinRequest(creds, "two", [
        jpeg(1, "https://cdn.example.com/a.jpg").ref,
        jpeg(2, "https://cdn.example.com/b.jpg").ref
      ]))
      expect(fake.pins[1]!.body["media_source"]).toEqual({
        source_type: "multiple_image_urls",
        items: [{ url: "https://cdn.example.com/a.jpg" }, { url: "https://cdn.example.com/b.jpg" }]
      })

      const images = [jpeg(4), jpeg(5), jpeg(6)]
      yield* client.publish(pinRequest(creds, "three", images.map((i) => i.ref)))
      const source = fake.pins[2]!.body["media_source"] as {
        source_type: string
        items: Array<{ data: string; content_type: string }>
      }
      expect(source.source_type).toBe("multiple_image_base64")
      expect(source.items).toHaveLength(3)
      source.items.forEach((item, i) => {
        expect(item.content_type).toBe("image/jpeg")
        expect(same(decoded(item.data), images[i]!.bytes)).toBe(true)
      })

      const six = yield* Effect.flip(
        client.publish(pinRequest(creds, "six", [1, 2, 3, 4, 5, 6].map((n) => jpeg(n).ref)))
      )
      expect(six.kind).toBe("media")
      const gif = media({ kind: "image", mimeType: "image/gif", bytes: bytesOf(10, 1) })
      expect((yield* Effect.flip(client.publish(pinRequest(creds, "gif", [gif])))).kind).toBe("media")
      expect(fake.pins).toHaveLength(3)
    }))

  it.scopedLive("video: register, upload with every upload parameter then the file, poll to succeeded, pin with video_id and a cover", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const creds = { access_token: fake.accessToken, default_board_id: "1070096254886001" }
      const clip = video()
      const result = yield* client.publish(pinRequest(creds, "Watch", [clip.ref]))
      expect(fake.server.requests.map((r) => `${r.method} ${r.path.replace(/\d+$/, "{id}")}`)).toEqual([
        "POST /v5/media",
        "POST /s3upload",
        "GET /v5/media/{id}",
        "GET /v5/media/{id}",
        "GET /v5/media/{id}",
        "POST /v5/pins"
      ])
      const upload = fake.uploads[0]!
      expect(upload.fields).toEqual([...Object.keys(upload.parameters), "file"])
      expect(same(upload.received, clip.bytes)).toBe(true)
      // The pre-signed storage URL never sees the token.
      expect(fake.server.requests[1]!.headers.authorization).toBeUndefined()
      expect(fake.pins[0]!.body["media_source"]).toEqual({
        source_type: "video_id",
        media_id: upload.mediaId,
        cover_image_key_frame_time: 1
      })
      expect(result.platformPostId).toBe(fake.pins[0]!.id)

      yield* client.publish(
        pinRequest(creds, "Again", [video().ref], { coverImageUrl: "https://cdn.example.com/c.jpg" })
      )
      expect(fake.pins[1]!.body["media_source"]).toMatchObject({ cover_image_url: "https://cdn.example.com/c.jpg" })

      fake.failVideo = true
      const failed = yield* Effect.flip(client.publish(pinRequest(creds, "Broken", [video().ref])))
      expect(failed.kind).toBe("media")
      expect(fake.pins).toHaveLength(2)
    }))

  it.scopedLive("errors: 401 auth (token scrubbed), 429 rate_limit from x-ratelimit-reset, 5xx transient, media, board, trial", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const creds = { access_token: fake.accessToken, default_board_id: "1070096254886001" }
      const fail = (caption: string, credentials: Readonly<Record<string, string>> = creds) =>
        Effect.flip(client.publish(pinRequest(credentials, caption)))

      const bogus = "pina_NOTAREALTOKEN0123456789ABCDEF"
      const auth = yield* fail("x", { access_token: bogus, default_board_id: "1" })
      expect(auth.kind).toBe("auth")
      expect(auth.message).toContain("Authentication failed.")
      expect(auth.message).not.toContain(bogus)

      const rate = yield* fail("x #fail-rate")
      expect(rate.kind).toBe("rate_limit")
      expect(rate.retryAfterSeconds).toBe(42)
      expect((yield* fail("x #fail-500")).kind).toBe("transient")
      const url = yield* fail("x #fail-url")
      expect(url.kind).toBe("media")
      expect(url.message).toContain("Unable to reach the URL")

      const board = yield* Effect.flip(client.publish(pinRequest(creds, "x", [jpeg().ref], { boardId: "999" })))
      expect(board.kind).toBe("permanent")
      expect(board.message).toContain("Board not found.")

      fake.trial = true
      const trial = yield* fail("x")
      expect(trial.kind).toBe("permanent")
      expect(trial.message).toContain("HERALD_PINTEREST_API_URL=https://api-sandbox.pinterest.com")
      expect(fake.pins).toHaveLength(0)
    }))

  it.scopedLive("metrics: lifetime impressions, saves and clicks over the last 90 days", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const creds = { access_token: fake.accessToken, default_board_id: "1070096254886001" }
      const { platformPostId } = yield* client.publish(pinRequest(creds, "measured"))
      const metrics = yield* client.metrics!(Redacted.make(creds), platformPostId)
      expect(metrics).toMatchObject({
        views: 0,
        likes: 0,
        comments: 0,
        shares: 0,
        impressions: 1200,
        saves: 31,
        clicks: 47
      })
      const call = fake.server.requests.find((r) => r.path.endsWith("/analytics"))!
      expect(call.query.get("metric_types")).toBe("IMPRESSION,SAVE,PIN_CLICK,OUTBOUND_CLICK,VIDEO_MRC_VIEW")
      const gone = yield* Effect.flip(client.metrics!(Redacted.make(creds), "123"))
      expect(gone.kind).toBe("permanent")
    }))

  it("the configured origin may carry Pinterest's /v5 suffix", () => {
    expect(Pinterest.apiOrigin("https://api-sandbox.pinterest.com/v5/")).toBe("https://api-sandbox.pinterest.com")
    expect(Pinterest.apiOrigin(undefined)).toBe("https://api.pinterest.com")
  })

  it.scopedLive("the fake refuses what breaks Pinterest's description", () =>
    Effect.gen(function*() {
      const { fake } = yield* setup
      const post = (body: unknown) =>
        Effect.promise(() =>
          fetch(`${fake.server.url}/v5/pins`, {
            method: "POST",
            headers: { authorization: `Bearer ${fake.accessToken}`, "content-type": "application/json" },
            body: JSON.stringify(body)
          }).then((r) => r.status)
        )
      // A board id that is not digits; a title over 100 characters; a source_type outside the enumeration.
      expect(
        yield* post({
          board_id: "my-board",
          media_source: { source_type: "image_url", url: "https://cdn.example.com/a.jpg" }
        })
      )
        .toBe(400)
      expect(
        yield* post({
          board_id: "1",
          title: "t".repeat(101),
          media_source: { source_type: "image_url", url: "https://cdn.example.com/a.jpg" }
        })
      ).toBe(400)
      expect(
        yield* post({ board_id: "1", media_source: { source_type: "gif_url", url: "https://cdn.example.com/a.gif" } })
      )
        .toBe(400)
      const problems = fake.server.takeViolations().map((v) => v.problems.join(" "))
      expect(problems[0]).toContain("body/board_id must match pattern")
      expect(problems[1]).toContain("title must NOT have more than 100 characters")
      expect(problems).toHaveLength(3)
      expect(fake.pins).toHaveLength(0)
    }))
})

describe("Pinterest findPublished (the account's pins)", () => {
  const lookup = (token: string, content: string, sinceMs: number, untilMs: number) => ({
    account: pinRequest({ access_token: token }, content).account,
    credentials: Redacted.make({ access_token: token, default_board_id: "1070096254886001" }),
    destinationId: DestinationId.make("00000000-0000-4000-8000-0000000000d1"),
    attempt: 1,
    content,
    since: DateTime.unsafeMake(sinceMs),
    until: DateTime.unsafeMake(untilMs)
  })
  /** A pin another client made at `at`. */
  const other = (fake: PinterestApiFake.PinterestFake, id: string, description: string, at: number) =>
    fake.pins.push({
      id,
      body: {
        board_id: "1070096254886002",
        description,
        media_source: { source_type: "image_url", url: "https://i.example/x.jpg" }
      },
      createdAt: at
    })

  it.scopedLive("a pin in the window is found by its description, on any board; other text is absent", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const creds = { access_token: fake.accessToken, default_board_id: "1070096254886001" }
      const before = Date.now()
      const sent = yield* client.publish(
        pinRequest(creds, "Sourdough, step by step", [jpeg().ref], { boardId: "1070096254886002" })
      )
      const after = Date.now()
      expect(yield* client.findPublished!(lookup(fake.accessToken, "Sourdough, step by step", before, after))).toEqual({
        _tag: "Found",
        platformPostId: sent.platformPostId,
        platformPostUrl: sent.platformPostUrl
      })
      expect(yield* client.findPublished!(lookup(fake.accessToken, "Rye", before, after))).toEqual({ _tag: "Absent" })
      const listed = fake.server.requests.filter((r) => r.method === "GET" && r.path === "/v5/pins")
      expect(listed[0]!.headers["authorization"]).toBe(`Bearer ${fake.accessToken}`)
      expect(listed[0]!.query.get("page_size")).toBe("250")
    }))

  it.scopedLive("pages until past the window; an older pin with the same description is not the attempt's", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const now = Date.now()
      other(fake, "1070096323600000001", "same words", now - 3_600_000)
      expect(yield* client.findPublished!(lookup(fake.accessToken, "same words", now - 1_000, now + 1_000)))
        .toEqual({ _tag: "Absent" })
      other(fake, "1070096323600000002", "ours", now)
      for (let i = 0; i < 300; i++) other(fake, String(1070096323610000000n + BigInt(i)), `noise ${i}`, now + 30_000)
      expect(yield* client.findPublished!(lookup(fake.accessToken, "ours", now - 1_000, now + 1_000))).toMatchObject({
        _tag: "Found",
        platformPostId: "1070096323600000002"
      })
      for (let i = 300; i < 2_100; i++) {
        other(fake, String(1070096323610000000n + BigInt(i)), `noise ${i}`, now + 30_000)
      }
      expect((yield* client.findPublished!(lookup(fake.accessToken, "absent", now - 1_000, now + 1_000)))._tag)
        .toBe("Unknown")
    }))

  it.scopedLive("a rate limit or a server error fails the lookup (never Absent)", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.failNext("GET /v5/pins", PinterestApiFake.pinterestError(429, 8, "Rate limit exceeded."))
      expect((yield* Effect.flip(client.findPublished!(lookup(fake.accessToken, "x", 0, Date.now())))).kind)
        .toBe("rate_limit")
      fake.failNext("GET /v5/pins", PinterestApiFake.pinterestError(500, 5, "Internal server error."))
      expect((yield* Effect.flip(client.findPublished!(lookup(fake.accessToken, "x", 0, Date.now())))).kind)
        .toBe("transient")
    }))
})
