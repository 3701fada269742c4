/**
 * Posts.create over real stores, on SQLite and (where one answers) Postgres.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import * as CircuitBreaker from "@herald/core/posts/CircuitBreaker"
import { DomainError } from "@herald/core/kernel/Errors"
import { EventStore } from "@herald/core/webhooks/EventStore"
import { PostStore } from "@herald/core/posts/PostStore"
import { Transactor } from "@herald/core/kernel/Transactor"
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

for (const db of await databasesUnderTest()) {
  describe.skipIf(db.layer === undefined)(`Posts.create on ${db.label}`, () => {
    if (db.layer === undefined) return
    layer(servicesOn(db.layer), { timeout: "60 seconds" })((it) => {
      it.effect("a draft needs no accounts, has no destinations and emits no post.scheduled", () =>
        Effect.gen(function*() {
          const w = yield* world
          const { record } = yield* Posts.create(w.caller, { content: "idea", draft: true })
          expect(record.post.isDraft).toBe(true)
          expect(record.destinations).toEqual([])
          expect(Posts.statusOf(record)).toBe("draft")
          expect(record.post.createdStatus).toBe("draft")
          const stored = yield* Posts.get(w.caller, record.post.id)
          expect(Posts.statusOf(stored)).toBe("draft")
          expect(yield* eventsOf(w)).toEqual([])
        }))

      it.effect("a draft with request_approval is pending and emits post.approval_requested", () =>
        Effect.gen(function*() {
          const w = yield* world
          const { record } = yield* Posts.create(w.caller, {
            content: "needs review",
            draft: true,
            request_approval: true,
            account_ids: [w.accounts.x.id]
          })
          expect(Option.map(record.post.approval, (a) => a.status)).toEqual(Option.some("pending"))
          const events = yield* eventsOf(w, "post.approval_requested")
          expect(events.map((e) => e.data["post_id"])).toEqual([record.post.id])
          const error = yield* domainError(
            Posts.create(w.caller, { content: "x", request_approval: true, account_ids: [w.accounts.x.id] })
          )
          expect(error.code).toBe("validation_error")
        }))

      it.effect("a scheduled post: destinations queued at scheduled_for, post.scheduled in the same write", () =>
        Effect.gen(function*() {
          const w = yield* world
          const at = inMinutes(90)
          const { record } = yield* Posts.create(w.caller, {
            content: "launch",
            account_ids: [w.accounts.x.id, w.accounts.linkedin.id, w.accounts.x.id],
            scheduled_for: at,
            timezone: "Europe/Paris"
          })
          expect(record.post.accountIds).toEqual([w.accounts.x.id, w.accounts.linkedin.id])
          expect(record.destinations.map((d) => [d.platform, d.status, DateTime.formatIso(d.dueAt)])).toEqual([
            ["x", "queued", at],
            ["linkedin", "queued", at]
          ])
          expect(Posts.statusOf(record)).toBe("scheduled")
          expect(record.post.createdStatus).toBe("scheduled")
          expect(Option.isSome(record.post.requestHash)).toBe(true)
          const [event] = yield* eventsOf(w, "post.scheduled")
          expect(event?.data).toEqual({
            post_id: record.post.id,
            status: "scheduled",
            scheduled_for: at,
            account_ids: [w.accounts.x.id, w.accounts.linkedin.id],
            publish_mode: "scheduled"
          })
        }))

      it.effect("an immediate post: destinations due now", () =>
        Effect.gen(function*() {
          const w = yield* world
          const { record } = yield* Posts.create(w.caller, { content: "now", account_ids: [w.accounts.bluesky.id] })
          expect(record.destinations.map((d) => DateTime.formatIso(d.dueAt))).toEqual([DateTime.formatIso(NOW)])
          expect(record.post.createdStatus).toBe("publishing")
          expect(Option.isNone(record.post.scheduledFor)).toBe(true)
          const [event] = yield* eventsOf(w, "post.scheduled")
          expect(event?.data["publish_mode"]).toBe("immediate")
        }))

      it.effect("the post and its event are one transaction: a failing event write leaves no post", () =>
        Effect.gen(function*() {
          const w = yield* world
          const events = yield* EventStore
          const failing = EventStore.of({
            ...events,
            append: () => Effect.dieMessage("event store down")
          })
          const exit = yield* Effect.exit(
            Posts.create(w.caller, { content: "atomic", account_ids: [w.accounts.x.id] }).pipe(
              Effect.provideService(EventStore, failing)
            )
          )
          expect(exit._tag).toBe("Failure")
          const page = yield* (yield* PostStore).list({
            organizationId: w.caller.key.organizationId,
            sort: "created_at",
            order: "desc",
            limit: 10,
            offset: 0
          })
          expect(page.total).toBe(0)
        }))

      it.effect("a plain draft is one atomic write (no BEGIN/COMMIT on Postgres); any other create is a transaction", () =>
        Effect.gen(function*() {
          const w = yield* world
          const tx = yield* Transactor
          const calls: Array<string> = []
          const spy = Transactor.of({
            withTransaction: (self) => Effect.suspend(() => (calls.push("transaction"), tx.withTransaction(self))),
            withAtomicWrite: (self) => Effect.suspend(() => (calls.push("atomic write"), tx.withAtomicWrite(self)))
          })
          const create = (body: Record<string, unknown>) =>
            Posts.create(w.caller, body).pipe(Effect.provideService(Transactor, spy))
          const draft = yield* create({
            content: "idea",
            draft: true,
            account_ids: [w.accounts.x.id],
            idempotency_key: "k1"
          })
          yield* create({ content: "review", draft: true, request_approval: true, account_ids: [w.accounts.x.id] })
          yield* create({ content: "later", account_ids: [w.accounts.x.id], scheduled_for: inMinutes(30) })
          expect(calls).toEqual(["atomic write", "transaction", "transaction"])
          const stored = yield* Posts.get(w.caller, draft.record.post.id)
          expect(stored.post.accountIds).toEqual([w.accounts.x.id])
          expect(stored.post.idempotencyKey).toEqual(Option.some("k1"))
        }))

      it.effect("a draft after a disconnect, a deletion or a new account behind the store's back (another process) gets today's answer", () =>
        Effect.gen(function*() {
          const w = yield* world
          const sql = yield* SqlClient.SqlClient
          const store = yield* PostStore
          // Past the account inserts of `world` (a list loaded within the TTL of a write is not kept).
          yield* TestClock.adjust("1 second")
          const calls: Array<string> = []
          const spy = PostStore.of({
            ...store,
            insert: (record) => Effect.suspend(() => (calls.push("insert"), store.insert(record))),
            insertChecked: (record, expected) =>
              Effect.suspend(() => (calls.push("insertChecked"), store.insertChecked(record, expected)))
          })
          const draft = (ids: ReadonlyArray<number>) =>
            Posts.create(w.caller, { content: "idea", draft: true, account_ids: ids }).pipe(
              Effect.provideService(PostStore, spy)
            )
          const { x, linkedin } = w.accounts
          const orgId = w.caller.key.organizationId
          const postCount = Effect.map(
            sql<{ readonly n: number | string }>`SELECT COUNT(*) AS n FROM posts WHERE organization_id = ${orgId}`,
            (rows) => Number(rows[0]?.n)
          )
          yield* draft([x.id, linkedin.id])
          yield* draft([x.id, linkedin.id])
          // Postgres: the second create's accounts come from memory, and its insert checks them again.
          expect(calls).toEqual(db.label === "sqlite" ? ["insert", "insert"] : ["insert", "insertChecked"])
          // SQLite keeps a list only while data_version is unchanged, which another connection's commit
          // changes (ReadCache.test.ts); a raw write on this connection is not another process there.
          if (db.label === "sqlite") return

          yield* sql`UPDATE social_accounts SET is_active = 0 WHERE id = ${linkedin.id}`
          const inactive = yield* domainError(draft([x.id, linkedin.id]))
          expect(inactive.code).toBe("invalid_accounts")
          expect(inactive.message).toBe(`Invalid account_ids: inactive (reconnect them first): ${linkedin.id}`)
          expect(inactive.details).toEqual({
            invalid_account_ids: [linkedin.id],
            not_found: [],
            inactive: [linkedin.id]
          })
          expect(yield* postCount).toBe(2)

          const [added] = yield* sql<{ readonly id: number | string }>`INSERT INTO social_accounts (organization_id,
            platform, platform_account_id, account_name, avatar_url, is_active, connection_flow, needs_reconnection,
            recent_failures, created_at, updated_at)
            VALUES (${orgId}, 'bluesky', 'elsewhere', '@new', '', 1, 'direct', 0, 0, 0, 0) RETURNING id`
          const addedId = Number(added!.id)
          const created = yield* draft([addedId, x.id])
          expect(created.record.post.accountIds).toEqual([addedId, x.id])
          expect((yield* Posts.get(w.caller, created.record.post.id)).post.accountIds).toEqual([addedId, x.id])

          yield* sql`DELETE FROM social_accounts WHERE id = ${addedId}`
          const gone = yield* domainError(draft([x.id, addedId]))
          expect(gone.details).toEqual({ invalid_account_ids: [addedId], not_found: [addedId], inactive: [] })
          expect(yield* postCount).toBe(3)
        }))

      it.effect("account_ids is required unless draft", () =>
        Effect.gen(function*() {
          const w = yield* world
          expect((yield* domainError(Posts.create(w.caller, { content: "a" }))).code).toBe("invalid_accounts")
          expect((yield* domainError(Posts.create(w.caller, { content: "a", account_ids: [] }))).code).toBe(
            "invalid_accounts"
          )
        }))

      it.effect.each(["media", "media_id", "mediaId", "attachments"])(
        "'%s' is invalid_field_name, checked before the schema",
        (field) =>
          Effect.gen(function*() {
            const w = yield* world
            // content is a number here: schema decoding would fail, but the field name is checked first.
            const error = yield* domainError(Posts.create(w.caller, { content: 5, [field]: ["x"] }))
            expect(error.code).toBe("invalid_field_name")
            expect(error.message).toContain("media_ids")
            expect(error.details?.["fields"]).toEqual([field])
          })
      )

      it.effect("a media field inside a thread post is invalid_field_name too", () =>
        Effect.gen(function*() {
          const w = yield* world
          const error = yield* domainError(
            Posts.create(w.caller, {
              content: "a",
              account_ids: [w.accounts.x.id],
              threadPosts: [{ content: "b", media: [] }]
            })
          )
          expect(error.code).toBe("invalid_field_name")
          expect(error.details?.["fields"]).toEqual(["threadPosts.0.media"])
        }))

      it.effect("content_too_long names the platform, limit and length; the override is what counts", () =>
        Effect.gen(function*() {
          const w = yield* world
          const error = yield* domainError(
            Posts.create(w.caller, { content: "a".repeat(281), account_ids: [w.accounts.x.id, w.accounts.linkedin.id] })
          )
          expect(error.code).toBe("content_too_long")
          expect(error.details).toMatchObject({ platform: "x", limit: 280, length: 281 })
          yield* Posts.create(w.caller, {
            content: "a".repeat(281),
            account_ids: [w.accounts.x.id, w.accounts.linkedin.id],
            platform_content: { x: { content: "short for x" } }
          })
        }))

      it.effect("too_many_accounts above 25", () =>
        Effect.gen(function*() {
          const w = yield* world
          const ids = Array.from({ length: 26 }, (_, i) => i + 1)
          const error = yield* domainError(Posts.create(w.caller, { content: "a", account_ids: ids }))
          expect(error.code).toBe("too_many_accounts")
          expect(error.details).toEqual({ limit: 25, received: 26 })
        }))

      it.effect("invalid_timezone for a non-IANA zone", () =>
        Effect.gen(function*() {
          const w = yield* world
          for (const timezone of ["Mars/Olympus", "+02:00", "GMT+2x", ""]) {
            const error = yield* domainError(
              Posts.create(w.caller, { content: "a", account_ids: [w.accounts.x.id], timezone })
            )
            expect(error.code).toBe("invalid_timezone")
          }
          const { record } = yield* Posts.create(w.caller, {
            content: "a",
            account_ids: [w.accounts.x.id],
            timezone: "America/New_York"
          })
          expect(record.post.timezone).toEqual(Option.some("America/New_York"))
        }))

      it.effect("invalid_accounts: absent, another organization's, outside a restricted key, inactive", () =>
        Effect.gen(function*() {
          const w = yield* world
          for (const id of [999999, w.foreign.id, w.accounts.inactive.id]) {
            const error = yield* domainError(
              Posts.create(w.caller, { content: "a", account_ids: [w.accounts.x.id, id] })
            )
            expect(error.code).toBe("invalid_accounts")
            expect(error.details?.["invalid_account_ids"]).toEqual([id])
          }
          const error = yield* domainError(
            Posts.create(w.restricted, { content: "a", account_ids: [w.accounts.linkedin.id] })
          )
          expect(error.code).toBe("invalid_accounts")
          yield* Posts.create(w.restricted, { content: "a", account_ids: [w.accounts.x.id] })
        }))

      it.effect("invalid_datetime and past_schedule_time", () =>
        Effect.gen(function*() {
          const w = yield* world
          const base = { content: "a", account_ids: [w.accounts.x.id] }
          for (const scheduled_for of ["next tuesday", "2026-02-30T10:00:00Z", "2026-07-01T25:00:00Z", "1719830400"]) {
            expect((yield* domainError(Posts.create(w.caller, { ...base, scheduled_for }))).code).toBe(
              "invalid_datetime"
            )
          }
          for (const scheduled_for of [inMinutes(-1), DateTime.formatIso(NOW)]) {
            expect((yield* domainError(Posts.create(w.caller, { ...base, scheduled_for }))).code).toBe(
              "past_schedule_time"
            )
          }
          // Any future instant is accepted on create.
          const { record } = yield* Posts.create(w.caller, { ...base, scheduled_for: "2026-07-01T10:00:01Z" })
          expect(Posts.statusOf(record)).toBe("scheduled")
        }))

      it.effect("scheduled_at is a deprecated alias; a time without offset is UTC", () =>
        Effect.gen(function*() {
          const w = yield* world
          const base = { content: "a", account_ids: [w.accounts.x.id] }
          const alias = yield* Posts.create(w.caller, { ...base, scheduled_at: "2026-07-01T12:00:00" })
          expect(alias.scheduledAtSent).toBe(true)
          expect(Option.map(alias.record.post.scheduledFor, DateTime.formatIso)).toEqual(
            Option.some("2026-07-01T12:00:00.000Z")
          )
          const offset = yield* Posts.create(w.caller, { ...base, scheduled_for: "2026-07-01T14:00:00+02:00" })
          expect(offset.scheduledAtSent).toBe(false)
          expect(Option.map(offset.record.post.scheduledFor, DateTime.formatIso)).toEqual(
            Option.some("2026-07-01T12:00:00.000Z")
          )
          const disagree = yield* domainError(
            Posts.create(w.caller, { ...base, scheduled_for: inMinutes(10), scheduled_at: inMinutes(20) })
          )
          expect(disagree.code).toBe("validation_error")
        }))

      it.effect("use_queue: 400 with scheduled_for; distinct messages for missing, empty and full queues", () =>
        Effect.gen(function*() {
          const w = yield* world
          const base = { content: "a", account_ids: [w.accounts.x.id], use_queue: true }
          const both = yield* domainError(Posts.create(w.caller, { ...base, scheduled_for: inMinutes(5) }))
          expect(both.code).toBe("validation_error")
          const missing = yield* domainError(Posts.create(w.caller, base))
          expect(missing.message).toBe(Posts.queueMessages.Missing)
          const withQueue = (allocation: Posts.QueueAllocation) =>
            Posts.create(w.caller, base).pipe(
              Effect.provideService(Posts.QueueAllocator, { allocate: () => Effect.succeed(allocation) })
            )
          expect((yield* domainError(withQueue({ _tag: "Empty" }))).message).toBe(Posts.queueMessages.Empty)
          expect((yield* domainError(withQueue({ _tag: "Full" }))).message).toBe(Posts.queueMessages.Full)
          expect(new Set(Object.values(Posts.queueMessages)).size).toBe(3)
          const slot = DateTime.add(NOW, { hours: 3 })
          const { record } = yield* withQueue({ _tag: "Slot", at: slot })
          expect(record.post.useQueue).toBe(true)
          expect(record.destinations.map((d) => DateTime.formatIso(d.dueAt))).toEqual([DateTime.formatIso(slot)])
        }))

      it.effect("media_ids must be UUIDs; the media hook sees them", () =>
        Effect.gen(function*() {
          const w = yield* world
          const base = { content: "a", account_ids: [w.accounts.x.id] }
          const error = yield* domainError(Posts.create(w.caller, { ...base, media_ids: ["not-a-uuid"] }))
          expect(error.code).toBe("validation_error")
          expect(error.details?.["validation_errors"]).toEqual([expect.objectContaining({ path: "media_ids.0" })])
          const seen: Array<ReadonlyArray<string>> = []
          const refused = yield* domainError(
            Posts.create(w.caller, { ...base, media_ids: ["6f1c2a4e-1d2b-4c3d-8e9f-0a1b2c3d4e5f"] }).pipe(
              Effect.provideService(Posts.PostMedia, {
                check: (input) =>
                  Effect.sync(() => seen.push(input.mediaIds)).pipe(
                    Effect.zipRight(DomainError.fail("file_not_uploaded", "no such media"))
                  )
              })
            )
          )
          expect(refused.code).toBe("file_not_uploaded")
          expect(seen).toEqual([["6f1c2a4e-1d2b-4c3d-8e9f-0a1b2c3d4e5f"]])
        }))

      it.effect("the 21st immediate publish of a minute is 429 post_limit_reached and writes nothing", () =>
        Effect.gen(function*() {
          const w = yield* world
          for (let i = 0; i < 20; i++) {
            yield* Posts.create(w.caller, { content: `n${i}`, account_ids: [w.accounts.x.id] })
          }
          const error = yield* domainError(Posts.create(w.caller, { content: "n20", account_ids: [w.accounts.x.id] }))
          expect(error.code).toBe("post_limit_reached")
          expect(error.details).toMatchObject({
            limit: 20,
            remaining: 0,
            reset_at: "2026-07-01T10:01:00.000Z",
            publish_mode: "immediate"
          })
          const listed = yield* Posts.list(w.caller, { limit: "100" })
          expect(listed.page.total).toBe(20)
          // Scheduled posts count only against their own allowance; drafts against none.
          yield* Posts.create(w.caller, {
            content: "later",
            account_ids: [w.accounts.x.id],
            scheduled_for: inMinutes(60)
          })
          yield* Posts.create(w.caller, { content: "draft", draft: true })
        }))

      it.effect("circuit breaker: 5 failures of one body in 6 h refuse it; an idempotency_key changes the hash", () =>
        Effect.gen(function*() {
          const w = yield* world
          const body = { content: "doomed", account_ids: [w.accounts.x.id], scheduled_for: inMinutes(30) }
          const { record } = yield* Posts.create(w.caller, body)
          const hash = Option.getOrThrow(record.post.requestHash)
          for (let i = 0; i < 5; i++) yield* CircuitBreaker.recordFailure(w.caller.key.organizationId, hash)
          const error = yield* domainError(Posts.create(w.caller, body))
          expect(error.code).toBe("permanent_failure_circuit_breaker")
          expect(error.details).toMatchObject({
            circuit_breaker_open: true,
            content_hash: hash,
            fail_count: 5,
            threshold: 5,
            ttl_seconds: 21600
          })
          // Same fields in another order: the same body.
          const reordered = { scheduled_for: body.scheduled_for, account_ids: body.account_ids, content: body.content }
          expect((yield* domainError(Posts.create(w.caller, reordered))).code).toBe("permanent_failure_circuit_breaker")
          const retried = yield* Posts.create(w.caller, { ...body, idempotency_key: "attempt-2" })
          expect(retried.record.post.requestHash).not.toEqual(record.post.requestHash)
          expect(retried.record.post.idempotencyKey).toEqual(Option.some("attempt-2"))
        }))
    })
  })
}
