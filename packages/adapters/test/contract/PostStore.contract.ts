import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { AccountStore } from "@herald/core/accounts/AccountStore"
import type { SocialAccount } from "@herald/core/domain/Account"
import { Destination, type DestinationStatus, Metrics } from "@herald/core/domain/Destination"
import { AccountId, ApiKeyId, CampaignId, MediaId, type OrganizationId, PostId } from "@herald/core/kernel/Ids"
import type { Platform } from "@herald/core/domain/Platform"
import { Approval, PlatformContentEntry, Post, type PostStatus, ThreadPost } from "@herald/core/domain/Post"
import { type PostPage, type PostQuery, PostStore } from "@herald/core/posts/PostStore"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import { accountValue, at, destination, givenOrganization, newAccount, post, type StoresLayer, T0 } from "./Fixtures.js"

const statuses: ReadonlyArray<DestinationStatus> = ["queued", "publishing", "published", "failed"]

/** The status rule, restated here so the SQL derivation is checked against it independently. */
const expectedStatus = (
  isDraft: boolean,
  destinations: ReadonlyArray<DestinationStatus>,
  immediate = false
): PostStatus => {
  if (isDraft) return "draft"
  const n = destinations.length
  const count = (s: DestinationStatus) => destinations.filter((d) => d === s).length
  // An immediate publish (no scheduled_for) with every destination queued is already publishing.
  if (n > 0 && count("queued") === n && immediate) return "publishing"
  if (n === 0 || count("queued") === n) return "scheduled"
  if (count("publishing") > 0 || count("queued") > 0) return "publishing"
  if (count("published") === n) return "published"
  if (count("failed") === n) return "failed"
  return "partially_failed"
}

/** Every multiset of up to `size` destination statuses. */
const mixes = (size: number): Array<Array<DestinationStatus>> => {
  const out: Array<Array<DestinationStatus>> = [[]]
  const grow = (prefix: Array<DestinationStatus>, from: number) => {
    if (prefix.length === size) return
    for (let i = from; i < statuses.length; i++) {
      const next = [...prefix, statuses[i]!]
      out.push(next)
      grow(next, i)
    }
  }
  grow([], 0)
  return out
}

const query = (organizationId: OrganizationId, overrides: Partial<PostQuery> = {}): PostQuery => ({
  organizationId,
  sort: "created_at",
  order: "asc",
  limit: 100,
  offset: 0,
  ...overrides
})

const ids = (page: { readonly items: ReadonlyArray<{ readonly post: Post }> }) => page.items.map((r) => r.post.id)
const sorted = (values: ReadonlyArray<string>) => [...values].sort()

/** A post with one destination per account, in the given statuses. */
const withDestinations = (
  base: Post,
  accounts: ReadonlyArray<SocialAccount>,
  states: ReadonlyArray<DestinationStatus>,
  overrides: (i: number) => Partial<ConstructorParameters<typeof Destination>[0]> = () => ({})
) => {
  const targeted = new Post({ ...base, accountIds: accounts.slice(0, states.length).map((a) => a.id) })
  return {
    post: targeted,
    destinations: states.map((status, i) =>
      destination({ post: targeted, account: accounts[i]! }, { status, createdAt: at(T0 + i), ...overrides(i) })
    )
  }
}

export const postStoreContract = (layer: StoresLayer) =>
  describe("PostStore", () => {
    it.effect("inserts and finds a post with every field and its destinations", () =>
      Effect.gen(function*() {
        const store = yield* PostStore
        const org = yield* givenOrganization
        const a = accountValue(org.id, 11, { platform: "x" })
        const b = accountValue(org.id, 7, { platform: "instagram" })
        const full = post(org.id, {
          createdByKey: Option.some(ApiKeyId.make(randomUUID())),
          content: "Launch day ✨ 'quoted' \"double\"",
          accountIds: [a.id, b.id],
          platformContent: {
            x: new PlatformContentEntry({ content: "short" }),
            instagram: new PlatformContentEntry({
              content: "long",
              contentType: "reel",
              settings: { share_to_feed: true }
            })
          },
          mediaIds: [MediaId.make(randomUUID())],
          scheduledFor: Option.some(at(T0 + 3_600_000)),
          timezone: Option.some("Europe/Paris"),
          campaignId: Option.some(CampaignId.make(4)),
          approval: Option.some(new Approval({ status: "approved", note: Option.some("ok"), consumed: false })),
          idempotencyKey: Option.some("idem-1"),
          requestHash: Option.some("abc123"),
          threadPosts: [new ThreadPost({ content: "2/2", media_ids: [MediaId.make(randomUUID())] })],
          useQueue: true,
          traceParent: Option.some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        })
        // Destinations come back in the order of account_ids, whatever their insertion order.
        const dB = destination({ post: full, account: b }, {
          status: "published",
          attempts: 2,
          error: Option.some("first try failed"),
          platformPostId: Option.some("ig-99"),
          platformPostUrl: Option.some("https://instagram.com/p/99"),
          publishedAt: Option.some(at(T0 + 5)),
          failedAt: Option.some(at(T0 + 2)),
          metrics: new Metrics({ ...Metrics.zero, views: 10, likes: 3 })
        })
        const dA = destination({ post: full, account: a })
        yield* store.insert({ post: full, destinations: [dB, dA] })
        expect(yield* store.findById(org.id, full.id)).toEqual(Option.some({ post: full, destinations: [dA, dB] }))
        const other = yield* givenOrganization
        expect(yield* store.findById(other.id, full.id)).toEqual(Option.none())
        // The engine's batch read: across organizations, ids repeated or missing.
        const elsewhere = post(other.id)
        yield* store.insert({ post: elsewhere, destinations: [] })
        const found = yield* store.findMany([full.id, PostId.make(randomUUID()), elsewhere.id, full.id])
        expect([...found].sort((x, y) => (x.post.id < y.post.id ? -1 : 1))).toEqual(
          [{ post: full, destinationCount: 2 }, { post: elsewhere, destinationCount: 0 }].sort((x, y) =>
            x.post.id < y.post.id ? -1 : 1
          )
        )
        expect(yield* store.findMany([])).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("keeps a plain post's trace context, and none when it has none", () =>
      Effect.gen(function*() {
        const store = yield* PostStore
        const org = yield* givenOrganization
        const traced = post(org.id, {
          traceParent: Option.some("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
        })
        const untraced = post(org.id)
        yield* store.insert({ post: traced, destinations: [] })
        yield* store.insert({ post: untraced, destinations: [] })
        expect(Option.map(yield* store.findById(org.id, traced.id), (r) => r.post)).toEqual(Option.some(traced))
        const found = yield* store.findMany([traced.id, untraced.id])
        expect(new Map(found.map((r) => [r.post.id, r.post.traceParent]))).toEqual(
          new Map([[traced.id, traced.traceParent], [untraced.id, Option.none()]])
        )
      }).pipe(Effect.provide(layer)))

    it.effect("insertChecked stores only while every expected account is in the organization, active, on its platform", () =>
      Effect.gen(function*() {
        const store = yield* PostStore
        const accounts = yield* AccountStore
        const sql = yield* SqlClient.SqlClient
        const org = yield* givenOrganization
        const other = yield* givenOrganization
        const x = yield* accounts.insert(newAccount(org.id, { platform: "x" }))
        const li = yield* accounts.insert(newAccount(org.id, { platform: "linkedin" }))
        const off = yield* accounts.insert(newAccount(org.id, { platform: "x", isActive: false }))
        const elsewhere = yield* accounts.insert(newAccount(other.id, { platform: "x" }))
        const gone = yield* accounts.insert(newAccount(org.id, { platform: "x" }))
        yield* accounts.delete(org.id, gone.id)
        const expect_ = (...xs: ReadonlyArray<SocialAccount>) => xs.map((a) => ({ id: a.id, platform: a.platform }))
        // Stored: a scheduled post with its targets and destinations, and a draft.
        const scheduled = post(org.id, { accountIds: [x.id, li.id] })
        const record = {
          post: scheduled,
          destinations: [destination({ post: scheduled, account: x }), destination({ post: scheduled, account: li })]
        }
        expect(yield* store.insertChecked(record, expect_(x, li, x))).toBe(true)
        expect(yield* store.findById(org.id, scheduled.id)).toEqual(Option.some(record))
        const draft = post(org.id, { isDraft: true, createdStatus: "draft", accountIds: [x.id] })
        expect(yield* store.insertChecked({ post: draft, destinations: [] }, expect_(x))).toBe(true)
        expect(yield* store.findById(org.id, draft.id)).toEqual(Option.some({ post: draft, destinations: [] }))
        expect((yield* store.list(query(org.id, { accountId: x.id }))).total).toBe(2)
        // No expected account: a plain insert.
        const bare = post(org.id, { isDraft: true, createdStatus: "draft" })
        expect(yield* store.insertChecked({ post: bare, destinations: [] }, [])).toBe(true)
        // Missed: nothing stored, not the post, its targets or its destinations.
        const misses: ReadonlyArray<
          [string, ReadonlyArray<SocialAccount>, ReadonlyArray<{ id: AccountId; platform: Platform }>]
        > = [
          ["inactive", [x, off], expect_(x, off)],
          ["another organization's", [x, elsewhere], expect_(x, elsewhere)],
          ["deleted", [gone], expect_(gone)],
          ["another platform", [x], [{ id: x.id, platform: "linkedin" }]]
        ]
        for (const [label, targets, expected] of misses) {
          const missed = post(org.id, { content: label, accountIds: targets.map((a) => a.id) })
          const stored = yield* store.insertChecked(
            { post: missed, destinations: targets.map((account) => destination({ post: missed, account })) },
            expected
          )
          expect([label, stored]).toEqual([label, false])
          expect(yield* store.findById(org.id, missed.id)).toEqual(Option.none())
        }
        // A disconnect written behind the store's back (another process): the next insert sees it.
        yield* sql`UPDATE social_accounts SET is_active = 0 WHERE id = ${li.id}`
        const late = post(org.id, { isDraft: true, createdStatus: "draft", accountIds: [x.id, li.id] })
        expect(yield* store.insertChecked({ post: late, destinations: [] }, expect_(x, li))).toBe(false)
        expect(yield* store.findById(org.id, late.id)).toEqual(Option.none())
        const counts = yield* sql<
          { readonly n: number | string }
        >`SELECT COUNT(*) AS n FROM post_targets WHERE post_id IN (
          SELECT id FROM posts WHERE organization_id = ${org.id})`
        expect(Number(counts[0]?.n)).toBe(3)
        const dests = yield* sql<
          { readonly n: number | string }
        >`SELECT COUNT(*) AS n FROM destinations WHERE organization_id = ${org.id}`
        expect(Number(dests[0]?.n)).toBe(2)
      }).pipe(Effect.provide(layer)))

    it.effect("updates the post's own fields and retargets drafts", () =>
      Effect.gen(function*() {
        const store = yield* PostStore
        const org = yield* givenOrganization
        const draft = post(org.id, { isDraft: true, createdStatus: "draft", accountIds: [AccountId.make(1)] })
        yield* store.insert({ post: draft, destinations: [] })
        const edited = new Post({
          ...draft,
          content: "edited",
          accountIds: [AccountId.make(2), AccountId.make(3)],
          approval: Option.some(new Approval({ status: "pending", note: Option.none(), consumed: false })),
          updatedAt: at(T0 + 1000)
        })
        yield* store.update(edited)
        expect(yield* store.findById(org.id, draft.id)).toEqual(Option.some({ post: edited, destinations: [] }))
        expect(ids(yield* store.list(query(org.id, { accountId: AccountId.make(1) })))).toEqual([])
        expect(ids(yield* store.list(query(org.id, { accountId: AccountId.make(3) })))).toEqual([draft.id])
        expect(ids(yield* store.list(query(org.id, { approval: ["pending"] })))).toEqual([draft.id])
        // Updating a post that does not exist (or of another organization) writes nothing.
        const other = yield* givenOrganization
        yield* store.update(new Post({ ...edited, organizationId: other.id, content: "hijack" }))
        yield* store.update(post(org.id, { accountIds: [AccountId.make(3)] }))
        expect(yield* store.findById(org.id, draft.id)).toEqual(Option.some({ post: edited, destinations: [] }))
        expect(ids(yield* store.list(query(org.id, { accountId: AccountId.make(3) })))).toEqual([draft.id])
      }).pipe(Effect.provide(layer)))

    it.effect("adds, replaces and deletes destinations; deletes posts", () =>
      Effect.gen(function*() {
        const store = yield* PostStore
        const org = yield* givenOrganization
        const a = accountValue(org.id, 1)
        const b = accountValue(org.id, 2, { platform: "threads" })
        const p = post(org.id, { accountIds: [a.id, b.id] })
        yield* store.insert({ post: p, destinations: [] })
        const dA = destination({ post: p, account: a })
        const dB = destination({ post: p, account: b })
        yield* store.insertDestinations([dA, dB])
        yield* store.insertDestinations([])
        const retried = new Destination({
          ...dB,
          status: "failed",
          attempts: 3,
          error: Option.some("boom"),
          failedAt: Option.some(at(T0 + 9)),
          updatedAt: at(T0 + 9)
        })
        yield* store.updateDestinations([retried])
        expect(yield* store.findById(org.id, p.id)).toEqual(Option.some({ post: p, destinations: [dA, retried] }))
        yield* store.deleteDestinations([dA.id])
        expect(yield* store.findById(org.id, p.id)).toEqual(Option.some({ post: p, destinations: [retried] }))
        expect(yield* store.delete(org.id, p.id)).toBe(true)
        expect(yield* store.delete(org.id, p.id)).toBe(false)
        expect(yield* store.findById(org.id, p.id)).toEqual(Option.none())
        // Its destinations went with it.
        yield* store.insert({ post: p, destinations: [] })
        expect(yield* store.findById(org.id, p.id)).toEqual(Option.some({ post: p, destinations: [] }))
      }).pipe(Effect.provide(layer)))

    it.effect("filters on the derived status exactly as the status rule says, for every mix", () =>
      Effect.gen(function*() {
        const store = yield* PostStore
        const org = yield* givenOrganization
        const accounts = [1, 2, 3].map((id) => accountValue(org.id, id))
        const expected = new Map<string, PostStatus>()
        let n = 0
        for (const isDraft of [false, true]) {
          for (const mix of mixes(3)) {
            // A draft has no destinations in practice; one with destinations still reports draft.
            if (isDraft && mix.length > 1) continue
            // Scheduled and immediate (no scheduled_for) variants of each mix.
            for (const immediate of [false, true]) {
              n += 1
              const scheduledFor = immediate ? Option.none() : Option.some(at(T0 + 3_600_000))
              const record = withDestinations(
                post(org.id, { isDraft, scheduledFor, createdAt: at(T0 + n) }),
                accounts,
                mix
              )
              yield* store.insert(record)
              expected.set(record.post.id, expectedStatus(isDraft, mix, immediate))
            }
          }
        }
        const all = ["draft", "scheduled", "publishing", "published", "partially_failed", "failed"] as const
        for (const status of all) {
          const want = [...expected].filter(([, s]) => s === status).map(([id]) => id)
          expect(want.length).toBeGreaterThan(0)
          const page = yield* store.list(query(org.id, { statuses: [status] }))
          expect({ status, ids: sorted(ids(page)) }).toEqual({ status, ids: sorted(want) })
          expect(page.total).toBe(want.length)
        }
        const settled = [...expected].filter(([, s]) => s === "published" || s === "failed").map(([id]) => id)
        expect(sorted(ids(yield* store.list(query(org.id, { statuses: ["published", "failed"] }))))).toEqual(
          sorted(settled)
        )
        expect((yield* store.list(query(org.id))).total).toBe(expected.size)
        // The same counts in one grouped pass (what /me reports), filters applied.
        const counts = yield* store.countByStatus(query(org.id))
        expect(counts).toEqual(Object.fromEntries(all.map((status) => [
          status,
          [...expected.values()].filter((s) => s === status).length
        ])))
        const drafts = yield* store.countByStatus(query(org.id, { statuses: ["draft"] }))
        expect(drafts).toEqual({ ...Object.fromEntries(all.map((status) => [status, 0])), draft: counts.draft })
      }).pipe(Effect.provide(layer)))

    it.effect("filters by platform, via destinations or, for drafts, via the targeted accounts", () =>
      Effect.gen(function*() {
        const store = yield* PostStore
        const accountsStore = yield* AccountStore
        const org = yield* givenOrganization
        const insta = yield* accountsStore.insert(newAccount(org.id, { platform: "instagram" }))
        const x = yield* accountsStore.insert(newAccount(org.id, { platform: "x" }))
        const onX = withDestinations(post(org.id, { createdAt: at(T0 + 1) }), [x], ["queued"])
        const onBoth = withDestinations(post(org.id, { createdAt: at(T0 + 2) }), [insta, x], ["published", "failed"])
        const draftInsta = post(org.id, { isDraft: true, accountIds: [insta.id], createdAt: at(T0 + 3) })
        const draftNone = post(org.id, { isDraft: true, createdAt: at(T0 + 4) })
        for (const r of [onX, onBoth, { post: draftInsta, destinations: [] }, { post: draftNone, destinations: [] }]) {
          yield* store.insert(r)
        }
        const by = (platforms: ReadonlyArray<Platform>) =>
          store.list(query(org.id, { platforms })).pipe(Effect.map(ids))
        expect(yield* by(["instagram"])).toEqual([onBoth.post.id, draftInsta.id])
        expect(yield* by(["x"])).toEqual([onX.post.id, onBoth.post.id])
        expect(yield* by(["x", "instagram"])).toEqual([onX.post.id, onBoth.post.id, draftInsta.id])
        expect(yield* by(["tiktok"])).toEqual([])
        // An empty list does not filter.
        expect((yield* by([])).length).toBe(4)
      }).pipe(Effect.provide(layer)))

    it.effect("filters by targeted account and by a key's visible accounts", () =>
      Effect.gen(function*() {
        const store = yield* PostStore
        const org = yield* givenOrganization
        const [a, b, c] = [1, 2, 3].map((id) => accountValue(org.id, id))
        const onA = withDestinations(post(org.id, { createdAt: at(T0 + 1) }), [a!], ["queued"])
        const onAB = withDestinations(post(org.id, { createdAt: at(T0 + 2) }), [a!, b!], ["queued", "published"])
        const draftC = post(org.id, { isDraft: true, accountIds: [c!.id], createdAt: at(T0 + 3) })
        const draftNone = post(org.id, { isDraft: true, createdAt: at(T0 + 4) })
        for (const r of [onA, onAB, { post: draftC, destinations: [] }, { post: draftNone, destinations: [] }]) {
          yield* store.insert(r)
        }
        const list = (overrides: Partial<PostQuery>) => store.list(query(org.id, overrides)).pipe(Effect.map(ids))
        expect(yield* list({ accountId: a!.id })).toEqual([onA.post.id, onAB.post.id])
        expect(yield* list({ accountId: b!.id })).toEqual([onAB.post.id])
        expect(yield* list({ accountId: c!.id })).toEqual([draftC.id])
        expect(yield* list({ visibleAccountIds: [a!.id] })).toEqual([onA.post.id, draftNone.id])
        expect(yield* list({ visibleAccountIds: [a!.id, b!.id] })).toEqual([onA.post.id, onAB.post.id, draftNone.id])
        expect(yield* list({ visibleAccountIds: [c!.id] })).toEqual([draftC.id, draftNone.id])
        expect(yield* list({ visibleAccountIds: [] })).toEqual([draftNone.id])
        expect(yield* list({ visibleAccountIds: [a!.id], accountId: b!.id })).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("filters by campaign, approval and time ranges (after inclusive, before exclusive)", () =>
      Effect.gen(function*() {
        const store = yield* PostStore
        const org = yield* givenOrganization
        const acc = accountValue(org.id, 1)
        const early = withDestinations(
          post(org.id, {
            createdAt: at(T0 + 100),
            updatedAt: at(T0 + 100),
            scheduledFor: Option.some(at(T0 + 1000)),
            campaignId: Option.some(CampaignId.make(1))
          }),
          [acc, accountValue(org.id, 2)],
          ["published", "published"],
          (i) => ({ publishedAt: Option.some(at(T0 + 5000 + i * 1000)) })
        )
        const late = withDestinations(
          post(org.id, {
            createdAt: at(T0 + 200),
            updatedAt: at(T0 + 900),
            scheduledFor: Option.some(at(T0 + 2000)),
            approval: Option.some(
              new Approval({ status: "changes_requested", note: Option.some("no"), consumed: false })
            )
          }),
          [acc],
          ["published"],
          () => ({ publishedAt: Option.some(at(T0 + 5500)) })
        )
        const unscheduled = {
          post: post(org.id, { createdAt: at(T0 + 300), updatedAt: at(T0 + 300) }),
          destinations: []
        }
        for (const r of [early, late, unscheduled]) yield* store.insert(r)
        const list = (overrides: Partial<PostQuery>) => store.list(query(org.id, overrides)).pipe(Effect.map(ids))
        const [e, l, u] = [early.post.id, late.post.id, unscheduled.post.id]
        expect(yield* list({ campaignId: CampaignId.make(1) })).toEqual([e])
        expect(yield* list({ approval: ["changes_requested", "approved"] })).toEqual([l])
        expect(yield* list({ createdAfter: at(T0 + 200) })).toEqual([l, u])
        expect(yield* list({ createdBefore: at(T0 + 200) })).toEqual([e])
        expect(yield* list({ createdAfter: at(T0 + 100), createdBefore: at(T0 + 300) })).toEqual([e, l])
        expect(yield* list({ scheduledAfter: at(T0 + 1500) })).toEqual([l])
        expect(yield* list({ scheduledBefore: at(T0 + 2000) })).toEqual([e])
        expect(yield* list({ updatedAfter: at(T0 + 300) })).toEqual([l, u])
        // On the latest published_at of the destinations: early's is T0 + 6000, late's T0 + 5500.
        expect(yield* list({ publishedAfter: at(T0 + 5600) })).toEqual([e])
        expect(yield* list({ publishedBefore: at(T0 + 6000) })).toEqual([l])
        expect(yield* list({ publishedAfter: at(T0 + 5500), publishedBefore: at(T0 + 6001) })).toEqual([e, l])
      }).pipe(Effect.provide(layer)))

    it.effect("searches content case-insensitively, with LIKE wildcards taken literally", () =>
      Effect.gen(function*() {
        const store = yield* PostStore
        const org = yield* givenOrganization
        const contents = ["Big SALE today", "50% off", "500 off", "snake_case", "snakeXcase", "back\\slash"]
        const posts = contents.map((content, i) => post(org.id, { content, createdAt: at(T0 + i) }))
        for (const p of posts) yield* store.insert({ post: p, destinations: [] })
        const search = (term: string) =>
          store.list(query(org.id, { search: term })).pipe(Effect.map((page) => page.items.map((r) => r.post.content)))
        expect(yield* search("sale")).toEqual(["Big SALE today"])
        expect(yield* search("big sale TODAY")).toEqual(["Big SALE today"])
        expect(yield* search("50%")).toEqual(["50% off"])
        expect(yield* search("% OFF")).toEqual(["50% off"])
        expect(yield* search("50")).toEqual(["50% off", "500 off"])
        expect(yield* search("e_c")).toEqual(["snake_case"])
        expect(yield* search("k\\s")).toEqual(["back\\slash"])
        expect(yield* search("%")).toEqual(["50% off"])
      }).pipe(Effect.provide(layer)))

    it.effect("sorts by each column either way, ties broken by id, and pages with a total", () =>
      Effect.gen(function*() {
        const store = yield* PostStore
        const org = yield* givenOrganization
        const other = yield* givenOrganization
        const acc = accountValue(org.id, 1)
        // Creation times repeat, so the tie-break on id decides within each pair.
        const records = Array.from({ length: 6 }, (_, i) =>
          withDestinations(
            post(org.id, {
              createdAt: at(T0 + Math.floor(i / 2)),
              updatedAt: at(T0 + 100 - i),
              scheduledFor: i % 3 === 0 ? Option.none() : Option.some(at(T0 + 1000 + i))
            }),
            [acc],
            i < 4 ? ["published"] : ["queued"],
            () => ({ publishedAt: i < 4 ? Option.some(at(T0 + 2000 + (i * 7) % 5)) : Option.none() })
          ))
        for (const r of records) yield* store.insert(r)
        yield* store.insert({ post: post(other.id), destinations: [] })
        const posts = records.map((r) => r.post)
        const lastPublished = (p: Post) =>
          records.find((r) => r.post.id === p.id)!.destinations[0]!.publishedAt.pipe(Option.map((t) => t.epochMillis))
        const key: Record<PostQuery["sort"], (p: Post) => Option.Option<number>> = {
          created_at: (p) => Option.some(p.createdAt.epochMillis),
          updated_at: (p) => Option.some(p.updatedAt.epochMillis),
          scheduled_for: (p) => p.scheduledFor.pipe(Option.map((t) => t.epochMillis)),
          published_at: lastPublished
        }
        for (const sort of ["created_at", "updated_at", "scheduled_for", "published_at"] as const) {
          for (const order of ["asc", "desc"] as const) {
            const sign = order === "asc" ? 1 : -1
            // Absent values last in either order; then the value; then the id, in the same direction.
            const want = [...posts].sort((a, b) => {
              const ka = key[sort](a)
              const kb = key[sort](b)
              if (Option.isNone(ka) || Option.isNone(kb)) {
                if (Option.isNone(ka) && Option.isNone(kb)) return sign * (a.id < b.id ? -1 : 1)
                return Option.isNone(ka) ? 1 : -1
              }
              return sign * (ka.value - kb.value) || sign * (a.id < b.id ? -1 : 1)
            }).map((p) => p.id)
            const page = yield* store.list(query(org.id, { sort, order }))
            expect({ sort, order, ids: ids(page) }).toEqual({ sort, order, ids: want })
            const window = yield* store.list(query(org.id, { sort, order, limit: 2, offset: 3 }))
            expect({ sort, order, ids: ids(window), total: window.total }).toEqual({
              sort,
              order,
              ids: want.slice(3, 5),
              total: 6
            })
            expect(window.hasMore).toBe(true)
            // Keyset: pages of 2 after the last post read (its sort value, absent as null, and id).
            const walked: Array<string> = []
            let after: PostQuery["after"] = undefined
            for (let k = 0; k < 5; k++) {
              const next: PostPage = yield* store.list(
                query(org.id, { sort, order, limit: 2, ...(after === undefined ? {} : { after }) })
              )
              walked.push(...ids(next))
              expect(next.total).toBe(6)
              const last = next.items.at(-1)
              if (!next.hasMore || last === undefined) break
              after = { value: Option.getOrNull(key[sort](last.post)), id: last.post.id }
            }
            expect({ sort, order, walked }).toEqual({ sort, order, walked: want })
          }
        }
        const beyond = yield* store.list(query(org.id, { offset: 10 }))
        expect(beyond).toEqual({ items: [], total: 6, hasMore: false })
        const filtered = yield* store.list(query(org.id, { statuses: ["scheduled"], limit: 1 }))
        expect(filtered.total).toBe(2)
        expect(filtered.items.length).toBe(1)
        expect(filtered.items[0]!.destinations.map((d) => d.status)).toEqual(["queued"])
      }).pipe(Effect.provide(layer)))
  })
