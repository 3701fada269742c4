/**
 * The plain row decoders of the dispatcher's hot path build exactly what the row schemas build, and
 * leave every row they do not recognise to the schema (same value, same error).
 */
import { describe, expect, it } from "@effect/vitest"
import { AccountId, ApiKeyId, CampaignId, MediaId, OrganizationId } from "@herald/core/kernel/Ids"
import { Metrics } from "@herald/core/domain/Destination"
import { Approval, PlatformContentEntry, ThreadPost } from "@herald/core/domain/Post"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import * as FastRows from "../../src/sql/internal/FastRows.js"
import { decodeClaimsBySchema, fastClaim } from "../../src/sql/SqlDispatchStore.js"
import { AccountRow, DestinationRow, encodePost, EventRow, PostRow } from "../../src/sql/internal/Rows.js"
import * as F from "../contract/Fixtures.js"

const org = OrganizationId.make(randomUUID())
const account = F.accountValue(org, 7, {
  credentials: Option.some(Redacted.make("{\"token\":\"t\"}")),
  lastSuccessAt: Option.some(F.at(F.T0 + 5)),
  recentFailures: 2
})
const post = F.post(org, {
  accountIds: [AccountId.make(7), AccountId.make(9)],
  mediaIds: [MediaId.make(randomUUID())],
  scheduledFor: Option.some(F.at(F.T0 + 60_000)),
  timezone: Option.some("Europe/Paris"),
  campaignId: Option.some(CampaignId.make(3)),
  requestHash: Option.some("abc")
})
const destination = F.destination({ post, account }, {
  status: "publishing",
  attempts: 2,
  error: Option.some("earlier failure"),
  failedAt: Option.some(F.at(F.T0 + 1)),
  metrics: new Metrics({ views: 1, likes: 2, comments: 3, shares: 4, impressions: 5, saves: 6, clicks: 7 })
})

/** What node-postgres returns: int8 columns as text. */
const asPg = (row: Record<string, unknown>, columns: ReadonlyArray<string>) =>
  Object.fromEntries(
    Object.entries(row).map(([k, v]) => [k, columns.includes(k) && typeof v === "number" ? String(v) : v])
  )

const sameValue = <A>(fast: A | undefined, schema: A) => {
  expect(fast).toBeDefined()
  expect(fast).toStrictEqual(schema)
}

describe("FastRows", () => {
  it("decodes a destination, a post and an account as their schemas do (SQLite and Postgres columns)", () => {
    const cases: ReadonlyArray<
      readonly [(row: unknown) => unknown, (row: unknown) => unknown, Record<string, unknown>, ReadonlyArray<string>]
    > = [
      [FastRows.destination, Schema.decodeUnknownSync(DestinationRow), Schema.encodeSync(DestinationRow)(destination), [
        "due_at",
        "attempts"
      ]],
      [FastRows.post, Schema.decodeUnknownSync(PostRow), Schema.encodeSync(PostRow)(post), [
        "campaign_id",
        "scheduled_for",
        "created_at"
      ]],
      [FastRows.account, Schema.decodeUnknownSync(AccountRow), Schema.encodeSync(AccountRow)(account), [
        "id",
        "recent_failures",
        "is_active"
      ]]
    ]
    for (const [fast, decode, row, pgColumns] of cases) {
      for (const variant of [row, asPg(row, pgColumns)]) sameValue(fast(variant), decode(variant))
    }
  })

  it("opens the credentials as the schema does", () => {
    const decoded = FastRows.account(Schema.encodeSync(AccountRow)(account))
    expect(decoded?.credentials.pipe(Option.map(Redacted.value))).toStrictEqual(Option.some("{\"token\":\"t\"}"))
  })

  it("leaves rows it does not recognise to the schema", () => {
    const row = Schema.encodeSync(DestinationRow)(destination)
    expect(FastRows.destination({ ...row, platform: "myspace" })).toBeUndefined()
    expect(FastRows.destination({ ...row, due_at: 1.5 })).toBeUndefined()
    expect(FastRows.destination({ ...row, metrics: "{\"views\":-1}" })).toBeUndefined()
    const { metrics_fetched_at: _, ...missing } = row
    expect(FastRows.destination(missing)).toBeUndefined()
    // A post whose per-platform content, approval or thread its column schema rejects is the row schema's.
    const postRow = Schema.encodeSync(PostRow)(post)
    expect(FastRows.post({ ...postRow, platform_content: "{\"x\":{\"content\":5}}" })).toBeUndefined()
    expect(FastRows.post({ ...postRow, approval: "{\"status\":\"maybe\",\"note\":null,\"consumed\":false}" }))
      .toBeUndefined()
    expect(FastRows.post({ ...postRow, thread_posts: "[{}]" })).toBeUndefined()
    expect(FastRows.post({ ...postRow, thread_posts: "not json" })).toBeUndefined()
  })

  it("decodes a post with per-platform content, an approval and a thread as the schema does", () => {
    const rich = F.post(org, {
      platformContent: {
        x: new PlatformContentEntry({ content: "hi", settings: { reply_settings: "following" } }),
        linkedin: new PlatformContentEntry({ content: "hello" })
      },
      approval: Option.some(new Approval({ status: "pending", note: Option.some("look"), consumed: false })),
      threadPosts: [new ThreadPost({ content: "second" }), new ThreadPost({ content: "third", media_ids: [] })]
    })
    const row = Schema.encodeSync(PostRow)(rich)
    for (const variant of [row, asPg(row, ["created_at"])]) {
      sameValue(FastRows.post(variant), Schema.decodeUnknownSync(PostRow)(variant))
    }
    sameValue(FastRows.post(row), rich)
  })

  it.effect("decodes a batch by the schema as soon as one row is not for the fast path", () =>
    Effect.gen(function*() {
      const decode = FastRows.decodeRows(FastRows.destination, Schema.decodeUnknown(Schema.Array(DestinationRow)))
      const row = Schema.encodeSync(DestinationRow)(destination)
      const good = yield* decode([row, row])
      expect(good).toHaveLength(2)
      sameValue(good[0], destination)
      const bad = yield* Effect.either(decode([row, { ...row, status: "lost" }]))
      expect(Either.isLeft(bad) && bad.left._tag === "ParseError").toBe(true)
    }))

  it("encodes an event row as the schema does", () => {
    const event = F.event(org, {
      type: "post.published",
      data: { post_id: post.id, n: 1 },
      createdAt: DateTime.unsafeMake(F.T0)
    })
    expect(FastRows.eventRow(event)).toStrictEqual({ ...Schema.encodeSync(EventRow)(event), post_id: post.id })
  })

  it.effect("encodes a post row as encodePost does, and leaves nested values to it", () =>
    Effect.gen(function*() {
      const plain = [
        post,
        F.post(org),
        F.post(org, {
          isDraft: true,
          createdStatus: "draft",
          useQueue: true,
          createdByKey: Option.some(ApiKeyId.make(randomUUID())),
          idempotencyKey: Option.some("k")
        })
      ]
      for (const p of plain) expect(FastRows.postRow(p)).toStrictEqual(yield* encodePost(p))
      const nested = [
        F.post(org, { platformContent: { x: new PlatformContentEntry({ content: "x" }) } }),
        F.post(org, { threadPosts: [new ThreadPost({ content: "t" })] }),
        F.post(org, {
          approval: Option.some(new Approval({ status: "pending", note: Option.none(), consumed: false }))
        })
      ]
      for (const p of nested) expect(FastRows.postRow(p)).toBeUndefined()
    }))

  it.effect("decodes a claimed row as the schema does, on SQLite and on Postgres (int8 lease columns as text)", () =>
    Effect.gen(function*() {
      const row = {
        ...Schema.encodeSync(DestinationRow)(destination),
        lease_token: "batch:1",
        lease_expires_at: F.T0 + 30_000,
        claimed_at: F.T0
      }
      const pgColumns = ["due_at", "attempts", "lease_expires_at", "claimed_at", "created_at", "updated_at"]
      for (const variant of [row, asPg(row, pgColumns), { ...row, claimed_at: null }]) {
        const [schema] = yield* decodeClaimsBySchema([variant])
        sameValue(fastClaim(variant), schema!)
      }
      expect(fastClaim({ ...row, lease_expires_at: "soon" })).toBeUndefined()
      expect(fastClaim({ ...row, claimed_at: 1.5 })).toBeUndefined()
    }))
})
