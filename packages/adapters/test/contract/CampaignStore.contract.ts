import { describe, expect, it } from "@effect/vitest"
import { Campaign } from "@herald/core/campaigns/Campaign"
import { CampaignStore, type NewCampaign } from "@herald/core/campaigns/CampaignStore"
import { CampaignId, type OrganizationId } from "@herald/core/kernel/Ids"
import { PostStore } from "@herald/core/posts/PostStore"
import { Transactor } from "@herald/core/kernel/Transactor"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { at, givenOrganization, post, type StoresLayer, T0 } from "./Fixtures.js"

const newCampaign = (organizationId: OrganizationId, overrides: Partial<NewCampaign> = {}): NewCampaign => ({
  organizationId,
  name: "Launch",
  description: Option.none(),
  color: Option.none(),
  status: "active",
  createdAt: at(T0),
  updatedAt: at(T0),
  ...overrides
})

export const campaignStoreContract = (layer: StoresLayer, concurrentLayer: StoresLayer = layer) =>
  describe("CampaignStore", () => {
    it.effect("inserts with increasing integer ids, finds within the organization only, updates", () =>
      Effect.gen(function*() {
        const store = yield* CampaignStore
        const org = yield* givenOrganization
        const other = yield* givenOrganization
        const a = yield* store.insert(newCampaign(org.id, {
          description: Option.some("Spring launch"),
          color: Option.some("#1da1f2")
        }))
        const b = yield* store.insert(newCampaign(org.id, { name: "B", createdAt: at(T0 + 1), updatedAt: at(T0 + 1) }))
        expect(b.id).toBeGreaterThan(a.id)
        expect(yield* store.findById(org.id, a.id)).toEqual(Option.some({ campaign: a, postCount: 0 }))
        expect(yield* store.findById(other.id, a.id)).toEqual(Option.none())
        expect(yield* store.findById(org.id, CampaignId.make(999_999))).toEqual(Option.none())
        const changed = new Campaign({
          ...a,
          name: "Renamed",
          description: Option.none(),
          color: Option.some("#000000"),
          status: "archived",
          updatedAt: at(T0 + 5)
        })
        yield* store.update(changed)
        expect(yield* store.findById(org.id, a.id)).toEqual(Option.some({ campaign: changed, postCount: 0 }))
        // An update naming another organization changes nothing.
        yield* store.update(new Campaign({ ...b, organizationId: other.id, name: "hijack" }))
        expect(Option.map(yield* store.findById(org.id, b.id), (r) => r.campaign.name)).toEqual(Option.some("B"))
      }).pipe(Effect.provide(layer)))

    it.effect("lists newest first with total, status filter, limit and offset, and post counts", () =>
      Effect.gen(function*() {
        const store = yield* CampaignStore
        const posts = yield* PostStore
        const org = yield* givenOrganization
        const other = yield* givenOrganization
        const made: Array<Campaign> = []
        for (let i = 0; i < 5; i++) {
          made.push(
            yield* store.insert(newCampaign(org.id, {
              name: `c${i}`,
              status: i % 2 === 0 ? "active" : "archived",
              createdAt: at(T0 + i),
              updatedAt: at(T0 + i)
            }))
          )
        }
        yield* store.insert(newCampaign(other.id))
        yield* posts.insert({ post: post(org.id, { campaignId: Option.some(made[4]!.id) }), destinations: [] })
        yield* posts.insert({
          post: post(org.id, { campaignId: Option.some(made[4]!.id), isDraft: true }),
          destinations: []
        })
        yield* posts.insert({ post: post(org.id, { campaignId: Option.some(made[0]!.id) }), destinations: [] })
        // A post of another organization naming the same number does not count.
        yield* posts.insert({ post: post(other.id, { campaignId: Option.some(made[4]!.id) }), destinations: [] })

        const all = yield* store.list({ organizationId: org.id, limit: 10, offset: 0 })
        expect(all.total).toBe(5)
        expect(all.items.map((r) => r.campaign.name)).toEqual(["c4", "c3", "c2", "c1", "c0"])
        expect(all.items.map((r) => r.postCount)).toEqual([2, 0, 0, 0, 1])
        const page = yield* store.list({ organizationId: org.id, limit: 2, offset: 1 })
        expect([page.total, page.items.map((r) => r.campaign.name)]).toEqual([5, ["c3", "c2"]])
        const archived = yield* store.list({ organizationId: org.id, status: "archived", limit: 10, offset: 0 })
        expect([archived.total, archived.items.map((r) => r.campaign.name)]).toEqual([2, ["c3", "c1"]])
        const beyond = yield* store.list({ organizationId: org.id, status: "active", limit: 10, offset: 3 })
        expect([beyond.total, beyond.items]).toEqual([3, []])
      }).pipe(Effect.provide(layer)))

    it.effect("delete clears campaign_id on the organization's posts, atomically with the delete", () =>
      Effect.gen(function*() {
        const store = yield* CampaignStore
        const posts = yield* PostStore
        const transactor = yield* Transactor
        const org = yield* givenOrganization
        const other = yield* givenOrganization
        const c = yield* store.insert(newCampaign(org.id))
        const tagged = post(org.id, { campaignId: Option.some(c.id) })
        const untouched = post(org.id)
        const foreign = post(other.id, { campaignId: Option.some(c.id) })
        for (const p of [tagged, untouched, foreign]) yield* posts.insert({ post: p, destinations: [] })

        // Another organization cannot delete it.
        expect(yield* transactor.withTransaction(store.delete(other.id, c.id, at(T0 + 9)))).toEqual(Option.none())
        // A failing transaction leaves both the campaign and the tag.
        const failed = yield* Effect.flip(transactor.withTransaction(
          Effect.zipRight(store.delete(org.id, c.id, at(T0 + 9)), Effect.fail("boom" as const))
        ))
        expect(failed).toBe("boom")
        expect(Option.isSome(yield* store.findById(org.id, c.id))).toBe(true)
        expect(Option.map(yield* posts.findById(org.id, tagged.id), (r) => Option.getOrNull(r.post.campaignId)))
          .toEqual(Option.some(c.id))

        expect(yield* transactor.withTransaction(store.delete(org.id, c.id, at(T0 + 9)))).toEqual(Option.some(1))
        expect(yield* store.findById(org.id, c.id)).toEqual(Option.none())
        const after = Option.getOrThrow(yield* posts.findById(org.id, tagged.id)).post
        expect([Option.getOrNull(after.campaignId), after.updatedAt]).toEqual([null, at(T0 + 9)])
        expect(Option.getOrThrow(yield* posts.findById(org.id, untouched.id)).post).toEqual(untouched)
        expect(Option.getOrNull(Option.getOrThrow(yield* posts.findById(other.id, foreign.id)).post.campaignId))
          .toEqual(c.id)
        expect(yield* transactor.withTransaction(store.delete(org.id, c.id, at(T0 + 9)))).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.live(
      "a post written while holding its campaign is unlinked by a delete racing it, never left dangling",
      () =>
        Effect.gen(function*() {
          const store = yield* CampaignStore
          const posts = yield* PostStore
          const transactor = yield* Transactor
          const org = yield* givenOrganization
          const c = yield* store.insert(newCampaign(org.id))
          expect(yield* store.holdForPost(org.id, c.id)).toBe(true)
          expect(yield* store.holdForPost((yield* givenOrganization).id, c.id)).toBe(false)
          const held = yield* Deferred.make<void>()
          const tagged = post(org.id, { campaignId: Option.some(c.id) })
          const writer = transactor.withTransaction(Effect.gen(function*() {
            expect(yield* store.holdForPost(org.id, c.id)).toBe(true)
            yield* Deferred.succeed(held, undefined)
            yield* Effect.sleep("300 millis")
            yield* posts.insert({ post: tagged, destinations: [] })
          }))
          const deleter = Effect.zipRight(
            Deferred.await(held),
            transactor.withTransaction(store.delete(org.id, c.id, at(T0 + 1)))
          )
          const [, deleted] = yield* Effect.all([writer, deleter], { concurrency: 2 })
          expect(deleted).toEqual(Option.some(1))
          const stored = Option.getOrThrow(yield* posts.findById(org.id, tagged.id)).post
          expect(Option.getOrNull(stored.campaignId)).toBeNull()
          expect(yield* store.holdForPost(org.id, c.id)).toBe(false)
        }).pipe(Effect.provide(concurrentLayer)),
      30_000
    )
  })
