/**
 * Posts.get, list, update (PATCH), remove (DELETE) and schedule over real stores, on SQLite and
 * (where one answers) Postgres.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Destination } from "@herald/core/domain/Destination"
import { DomainError } from "@herald/core/kernel/Errors"
import { Approval, Post } from "@herald/core/domain/Post"
import { PostStore } from "@herald/core/posts/PostStore"
import * as Posts from "@herald/core/posts/Posts"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { databasesUnderTest } from "../../packages/adapters/test/support/TestDatabases.js"
import { eventsOf, inMinutes, NOW, servicesOn, world } from "./PostsFixture.js"

const domainError = <A, R>(self: Effect.Effect<A, unknown, R>) =>
  Effect.flatMap(
    Effect.flip(self),
    (e) => e instanceof DomainError ? Effect.succeed(e) : Effect.dieMessage(`expected a DomainError, got ${String(e)}`)
  )

const withDestinations = (
  record: { post: Post; destinations: ReadonlyArray<Destination> },
  status: Destination["status"]
) =>
  Effect.flatMap(
    PostStore,
    (store) => store.updateDestinations(record.destinations.map((d) => new Destination({ ...d, status })))
  )

for (const db of await databasesUnderTest()) {
  describe.skipIf(db.layer === undefined)(`Posts editing on ${db.label}`, () => {
    if (db.layer === undefined) return
    layer(servicesOn(db.layer), { timeout: "60 seconds" })((it) => {
      it.effect("get: 404 for a malformed id, another organization's post, and a post outside a restricted key", () =>
        Effect.gen(function*() {
          const w = yield* world
          const other = yield* world
          const { record } = yield* Posts.create(w.caller, { content: "li", account_ids: [w.accounts.linkedin.id] })
          expect((yield* Posts.get(w.caller, record.post.id.toUpperCase())).post.id).toBe(record.post.id)
          for (
            const [caller, id] of [
              [w.caller, "nope"],
              [other.caller, record.post.id],
              [w.restricted, record.post.id]
            ] as const
          ) {
            expect((yield* domainError(Posts.get(caller, id))).code).toBe("not_found")
          }
        }))

      it.effect("list: filters, twitter = x, invalid values dropped, pagination with total and has_more", () =>
        Effect.gen(function*() {
          const w = yield* world
          const x = yield* Posts.create(w.caller, {
            content: "on x",
            account_ids: [w.accounts.x.id],
            scheduled_for: inMinutes(30)
          })
          yield* TestClock.adjust("1 second")
          yield* Posts.create(w.caller, {
            content: "on bluesky",
            account_ids: [w.accounts.bluesky.id],
            scheduled_for: inMinutes(40)
          })
          yield* TestClock.adjust("1 second")
          yield* Posts.create(w.caller, { content: "a draft", draft: true })
          const all = yield* Posts.list(w.caller, {})
          expect(all.page.total).toBe(3)
          expect(all.limit).toBe(20)
          expect(all.page.items.map((r) => r.post.content)).toEqual(["a draft", "on bluesky", "on x"])
          const twitter = yield* Posts.list(w.caller, { platform: "twitter,myspace" })
          expect(twitter.page.items.map((r) => r.post.id)).toEqual([x.record.post.id])
          const statuses = yield* Posts.list(w.caller, { status: "draft,bogus" })
          expect(statuses.page.items.map((r) => r.post.content)).toEqual(["a draft"])
          const junk = yield* Posts.list(w.caller, { status: "bogus", sort: "nope", order: "sideways", limit: "abc" })
          expect(junk.page.total).toBe(3)
          const page = yield* Posts.list(w.caller, { limit: "2", offset: "1", sort: "created_at", order: "asc" })
          expect(page.page.items.map((r) => r.post.content)).toEqual(["on bluesky", "a draft"])
          expect([page.limit, page.offset, page.page.total, page.hasMore]).toEqual([2, 1, 3, false])
          const first = yield* Posts.list(w.caller, { limit: "1" })
          expect(first.hasMore).toBe(true)
          const restricted = yield* Posts.list(w.restricted, {})
          expect(restricted.page.items.map((r) => r.post.content).sort()).toEqual(["a draft", "on x"])
        }))

      it.effect("parseListQuery: clamps limit, drops junk, reads every filter", () =>
        Effect.gen(function*() {
          const w = yield* world
          const q = Posts.parseListQuery(w.caller, {
            status: "published, failed ,nope",
            platform: "TWITTER,bluesky,x",
            account_id: "12",
            campaign_id: "-3",
            created_after: "2026-01-01T00:00:00Z",
            created_before: "yesterday",
            scheduled_after: "2026-01-01",
            published_before: "2026-02-01T00:00:00+01:00",
            updated_after: "2026-03-01T00:00:00Z",
            search: "hello",
            sort: "published_at",
            order: "ASC",
            limit: "500",
            offset: "-1",
            approval: "pending,maybe"
          })
          expect(q.statuses).toEqual(["published", "failed"])
          expect(q.platforms).toEqual(["x", "bluesky"])
          expect(q.accountId).toBe(12)
          expect(q.campaignId).toBeUndefined()
          expect(q.createdAfter && DateTime.formatIso(q.createdAfter)).toBe("2026-01-01T00:00:00.000Z")
          expect(q.createdBefore).toBeUndefined()
          expect(q.publishedBefore && DateTime.formatIso(q.publishedBefore)).toBe("2026-01-31T23:00:00.000Z")
          expect([q.search, q.sort, q.order, q.limit, q.offset]).toEqual(["hello", "published_at", "asc", 100, 0])
          expect(q.approval).toEqual(["pending"])
          expect(Posts.parseListQuery(w.caller, { limit: "0" }).limit).toBe(20)
          expect(Posts.parseListQuery(w.caller, { limit: "7" }).limit).toBe(7)
        }))

      it.effect("PATCH edits and reschedules a scheduled post, moving its destinations; post.updated in the same write", () =>
        Effect.gen(function*() {
          const w = yield* world
          const { record } = yield* Posts.create(w.caller, {
            content: "v1",
            account_ids: [w.accounts.x.id, w.accounts.linkedin.id],
            scheduled_for: inMinutes(30)
          })
          yield* TestClock.adjust("1 minute")
          const updated = yield* Posts.update(w.caller, record.post.id, {
            content: "v2",
            scheduled_for: inMinutes(120),
            account_ids: [w.accounts.linkedin.id, w.accounts.bluesky.id]
          })
          const post = updated.record.post
          expect(post.content).toBe("v2")
          expect(updated.changed).toEqual(["content", "account_ids", "scheduled_for"])
          expect(updated.record.destinations.map((d) => [d.platform, DateTime.formatIso(d.dueAt)])).toEqual([
            ["linkedin", inMinutes(120)],
            ["bluesky", inMinutes(120)]
          ])
          const stored = yield* Posts.get(w.caller, post.id)
          expect(stored.destinations.map((d) => d.platform)).toEqual(["linkedin", "bluesky"])
          const [event] = yield* eventsOf(w, "post.updated")
          expect(event?.data).toMatchObject({
            post_id: post.id,
            status: "scheduled",
            scheduled_for: inMinutes(120),
            changed: ["content", "account_ids", "scheduled_for"]
          })
          // Sending the same values back changes nothing.
          const again = yield* Posts.update(w.caller, post.id, { content: "v2", scheduled_for: inMinutes(120) })
          expect(again.changed).toEqual([])
          // Rules apply to the result.
          expect((yield* domainError(Posts.update(w.caller, post.id, { scheduled_for: inMinutes(-5) }))).code).toBe(
            "past_schedule_time"
          )
          expect((yield* domainError(Posts.update(w.caller, post.id, { content: "x".repeat(3001) }))).code).toBe(
            "content_too_long"
          )
          expect((yield* domainError(Posts.update(w.caller, post.id, { media: ["a"] }))).code).toBe(
            "invalid_field_name"
          )
          expect((yield* domainError(Posts.update(w.caller, post.id, { draft: true }))).code).toBe("validation_error")
        }))

      it.effect("PATCH in every state: what each field changes per destination status", () =>
        Effect.gen(function*() {
          const w = yield* world
          const store = yield* PostStore
          const statuses = (id: string) =>
            Effect.map(Posts.get(w.caller, id), (r) =>
              r.destinations.map((d) => [d.accountId, d.status, DateTime.formatIso(d.dueAt)]))

          // Due now: content applies (the claim that comes next loads it); a reschedule would race a claim.
          const now = yield* Posts.create(w.caller, { content: "now", account_ids: [w.accounts.x.id] })
          expect((yield* Posts.update(w.caller, now.record.post.id, { content: "edit" })).record.post.content).toBe(
            "edit"
          )
          const due = yield* domainError(Posts.update(w.caller, now.record.post.id, { scheduled_for: inMinutes(30) }))
          expect([due.code, due.details?.["fields"]]).toEqual(["invalid_post_status", ["scheduled_for"]])

          // Fully published: campaign and time zone only; content reaches no one; nothing is re-sent.
          const later = yield* Posts.create(w.caller, {
            content: "later",
            account_ids: [w.accounts.x.id],
            scheduled_for: inMinutes(60)
          })
          yield* withDestinations(later.record, "published")
          const before = yield* statuses(later.record.post.id)
          const published = yield* domainError(Posts.update(w.caller, later.record.post.id, { content: "edit" }))
          expect([published.code, published.details]).toEqual(["invalid_post_status", {
            status: "published",
            fields: ["content"]
          }])
          const zoned = yield* Posts.update(w.caller, later.record.post.id, {
            timezone: "Europe/Paris",
            content: "later"
          })
          expect([zoned.changed, Posts.statusOf(zoned.record)]).toEqual([["timezone"], "published"])
          expect(yield* statuses(later.record.post.id)).toEqual(before)
          const moved = yield* domainError(
            Posts.update(w.caller, later.record.post.id, { scheduled_for: inMinutes(90) })
          )
          expect(moved.code).toBe("invalid_post_status")
          const dropped = yield* domainError(
            Posts.update(w.caller, later.record.post.id, { account_ids: [w.accounts.linkedin.id] })
          )
          expect([dropped.code, dropped.details?.["account_ids"]]).toEqual(["invalid_post_status", [w.accounts.x.id]])

          // Partially failed: content applies (the next retry uses it); the failed destination stays failed
          // and unmoved; the queued one moves with a new scheduled_for; campaign_id can be cleared.
          const mixed = yield* Posts.create(w.caller, {
            content: "mixed",
            account_ids: [w.accounts.x.id, w.accounts.linkedin.id, w.accounts.bluesky.id],
            scheduled_for: inMinutes(60)
          })
          const [dx, dli, dbs] = mixed.record.destinations
          yield* store.updateDestinations([
            new Destination({ ...dx!, status: "published" }),
            new Destination({ ...dli!, status: "failed", error: Option.some("refused") })
          ])
          const edited = yield* Posts.update(w.caller, mixed.record.post.id, {
            content: "fixed text",
            scheduled_for: inMinutes(120),
            campaign_id: null
          })
          expect(edited.changed).toEqual(["content", "scheduled_for"])
          expect(edited.record.post.content).toBe("fixed text")
          expect(yield* statuses(mixed.record.post.id)).toEqual([
            [dx!.accountId, "published", DateTime.formatIso(dx!.dueAt)],
            [dli!.accountId, "failed", DateTime.formatIso(dli!.dueAt)],
            [dbs!.accountId, "queued", inMinutes(120)]
          ])
          // The failed account can be removed; the published one cannot.
          const removed = yield* Posts.update(w.caller, mixed.record.post.id, {
            account_ids: [w.accounts.x.id, w.accounts.bluesky.id]
          })
          expect(removed.record.destinations.map((d) =>
            d.status
          )).toEqual(["published", "queued"])

          // Publishing: content applies to what is not yet sent; the publishing destination is untouched.
          const busy = yield* Posts.create(w.caller, {
            content: "busy",
            account_ids: [w.accounts.x.id],
            scheduled_for: inMinutes(60)
          })
          yield* withDestinations(busy.record, "publishing")
          const changed = yield* Posts.update(w.caller, busy.record.post.id, { content: "busy 2" })
          expect([changed.record.post.content, changed.record.destinations.map((d) => d.status)]).toEqual(["busy 2", [
            "publishing"
          ]])
          const events = yield* eventsOf(w, "post.updated")
          expect(events.filter((e) => e.data["post_id"] === busy.record.post.id)).toHaveLength(1)
        }))

      it.effect("editing a changes_requested draft resubmits it for approval", () =>
        Effect.gen(function*() {
          const w = yield* world
          const { record } = yield* Posts.create(w.caller, { content: "v1", draft: true, request_approval: true })
          const store = yield* PostStore
          yield* store.update(
            new Post({
              ...record.post,
              approval: Option.some(
                new Approval({ status: "changes_requested", note: Option.some("tone"), consumed: false })
              )
            })
          )
          const updated = yield* Posts.update(w.caller, record.post.id, { content: "v2" })
          expect(Option.map(updated.record.post.approval, (a) => a.status)).toEqual(Option.some("pending"))
          const requested = yield* eventsOf(w, "post.approval_requested")
          expect(requested).toHaveLength(2)
          expect(requested[1]?.data).toMatchObject({ post_id: record.post.id, resubmitted: true })
        }))

      it.effect("DELETE removes the post with post.deleted; refused while a destination is publishing", () =>
        Effect.gen(function*() {
          const w = yield* world
          const { record } = yield* Posts.create(w.caller, {
            content: "bye",
            account_ids: [w.accounts.x.id],
            scheduled_for: inMinutes(5)
          })
          yield* Posts.remove(w.caller, record.post.id)
          expect((yield* domainError(Posts.get(w.caller, record.post.id))).code).toBe("not_found")
          const [event] = yield* eventsOf(w, "post.deleted")
          expect(event?.data).toMatchObject({ post_id: record.post.id, account_ids: [w.accounts.x.id] })
          expect((yield* domainError(Posts.remove(w.caller, record.post.id))).code).toBe("not_found")
          const busy = yield* Posts.create(w.caller, { content: "busy", account_ids: [w.accounts.x.id] })
          yield* withDestinations(busy.record, "publishing")
          expect((yield* domainError(Posts.remove(w.caller, busy.record.post.id))).code).toBe("invalid_post_status")
          yield* withDestinations(busy.record, "failed")
          yield* Posts.remove(w.caller, busy.record.post.id)
        }))

      it.effect("schedule: a draft gets destinations; 409 for a non-draft; at least 1 minute ahead", () =>
        Effect.gen(function*() {
          const w = yield* world
          const { record } = yield* Posts.create(w.caller, { content: "plan", draft: true })
          expect((yield* domainError(Posts.schedule(w.caller, record.post.id, { scheduled_for: inMinutes(1) }))).code)
            .toBe(
              "invalid_accounts"
            )
          const soon = yield* domainError(
            Posts.schedule(w.caller, record.post.id, {
              scheduled_for: "2026-07-01T10:00:59Z",
              account_ids: [w.accounts.x.id]
            })
          )
          expect(soon.code).toBe("past_schedule_time")
          const scheduled = yield* Posts.schedule(w.caller, record.post.id, {
            scheduled_for: inMinutes(1),
            account_ids: [w.accounts.x.id, w.accounts.bluesky.id],
            timezone: "Asia/Tokyo"
          })
          expect(Posts.statusOf(scheduled)).toBe("scheduled")
          expect(scheduled.post.timezone).toEqual(Option.some("Asia/Tokyo"))
          expect(scheduled.destinations.map((d) => [d.platform, DateTime.formatIso(d.dueAt)])).toEqual([
            ["x", inMinutes(1)],
            ["bluesky", inMinutes(1)]
          ])
          expect(scheduled.post.createdStatus).toBe("draft")
          const [event] = yield* eventsOf(w, "post.scheduled")
          expect(event?.data).toMatchObject({ post_id: record.post.id, publish_mode: "scheduled" })
          const conflict = yield* domainError(Posts.schedule(w.caller, record.post.id, { publish_now: true }))
          expect([conflict.code, conflict.status]).toEqual(["invalid_post_status", 409])
        }))

      it.effect("schedule with publish_now: due now; a draft's own scheduled_for is used when none is sent", () =>
        Effect.gen(function*() {
          const w = yield* world
          const a = yield* Posts.create(w.caller, { content: "go", draft: true, account_ids: [w.accounts.x.id] })
          const now = yield* Posts.schedule(w.caller, a.record.post.id, { publish_now: true })
          expect(now.destinations.map((d) => DateTime.formatIso(d.dueAt))).toEqual([DateTime.formatIso(NOW)])
          const b = yield* Posts.create(w.caller, {
            content: "later",
            draft: true,
            account_ids: [w.accounts.x.id],
            scheduled_for: inMinutes(30)
          })
          const later = yield* Posts.schedule(w.caller, b.record.post.id, {})
          expect(later.destinations.map((d) => DateTime.formatIso(d.dueAt))).toEqual([inMinutes(30)])
          const c = yield* Posts.create(w.caller, { content: "x", draft: true, account_ids: [w.accounts.x.id] })
          expect((yield* domainError(Posts.schedule(w.caller, c.record.post.id, {}))).code).toBe("validation_error")
          expect(
            (yield* domainError(
              Posts.schedule(w.caller, c.record.post.id, { publish_now: true, scheduled_for: inMinutes(5) })
            ))
              .code
          ).toBe("validation_error")
        }))

      it.effect("a draft that requested approval schedules only once approved, and the approval is consumed", () =>
        Effect.gen(function*() {
          const w = yield* world
          const { record } = yield* Posts.create(w.caller, {
            content: "review me",
            draft: true,
            request_approval: true,
            account_ids: [w.accounts.x.id]
          })
          const pending = yield* domainError(Posts.schedule(w.caller, record.post.id, { publish_now: true }))
          expect([pending.code, pending.status, pending.details?.["approval_status"]]).toEqual([
            "invalid_post_status",
            409,
            "pending"
          ])
          const store = yield* PostStore
          yield* store.update(
            new Post({
              ...record.post,
              approval: Option.some(new Approval({ status: "approved", note: Option.none(), consumed: false }))
            })
          )
          const scheduled = yield* Posts.schedule(w.caller, record.post.id, { publish_now: true })
          expect(Option.map(scheduled.post.approval, (a) => a.consumed)).toEqual(Option.some(true))
          const stored = yield* Posts.get(w.caller, record.post.id)
          expect(Option.map(stored.post.approval, (a) => [a.status, a.consumed])).toEqual(
            Option.some(["approved", true])
          )
        }))
    })
  })
}
