/**
 * Approvals.approve and Approvals.requestChanges over real stores, on SQLite and (where one answers)
 * Postgres: the review and its event are one write, a restricted key reviews only what it sees, and
 * the event data.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Approvals from "@herald/core/workflow/Approvals"
import { DomainError } from "@herald/core/kernel/Errors"
import { EventStore } from "@herald/core/webhooks/EventStore"
import * as Posts from "@herald/core/posts/Posts"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { databasesUnderTest } from "../../packages/adapters/test/support/TestDatabases.js"
import { eventsOf, servicesOn, world } from "./PostsFixture.js"

const domainError = <A, R>(self: Effect.Effect<A, unknown, R>) =>
  Effect.flatMap(
    Effect.flip(self),
    (e) => e instanceof DomainError ? Effect.succeed(e) : Effect.dieMessage(`expected a DomainError, got ${String(e)}`)
  )

for (const db of await databasesUnderTest()) {
  describe.skipIf(db.layer === undefined)(`Approvals on ${db.label}`, () => {
    if (db.layer === undefined) return
    layer(servicesOn(db.layer), { timeout: "60 seconds" })((it) => {
      it.effect("the review and its event are one write: a failing event append leaves the draft pending", () =>
        Effect.gen(function*() {
          const w = yield* world
          const { record } = yield* Posts.create(w.caller, {
            content: "review me",
            draft: true,
            request_approval: true
          })
          const events = yield* EventStore
          const failing = EventStore.of({ ...events, append: () => Effect.dieMessage("event store down") })
          for (
            const review of [
              Approvals.approve(w.caller, record.post.id, { note: "ok" }),
              Approvals.requestChanges(w.caller, record.post.id, { note: "no" })
            ]
          ) {
            const exit = yield* Effect.exit(review.pipe(Effect.provideService(EventStore, failing)))
            expect(exit._tag).toBe("Failure")
            const stored = yield* Posts.get(w.caller, record.post.id)
            expect(Option.map(stored.post.approval, (a) => a.status)).toEqual(Option.some("pending"))
          }
          expect((yield* eventsOf(w)).map((e) => e.type)).toEqual(["post.approval_requested"])
        }))

      it.effect("approve and request-changes record the note on the post and in the event", () =>
        Effect.gen(function*() {
          const w = yield* world
          const a = (yield* Posts.create(w.caller, { content: "a", draft: true, request_approval: true })).record
          const b = (yield* Posts.create(w.caller, { content: "b", draft: true, request_approval: true })).record
          const approved = yield* Approvals.approve(w.caller, a.post.id, { note: "  " })
          expect(Option.map(approved.post.approval, (x) => [x.status, Option.getOrNull(x.note), x.consumed]))
            .toEqual(Option.some(["approved", null, false]))
          const sentBack = yield* Approvals.requestChanges(w.caller, b.post.id, { note: "fix the link" })
          expect(Option.map(sentBack.post.approval, (x) => [x.status, Option.getOrNull(x.note)]))
            .toEqual(Option.some(["changes_requested", "fix the link"]))
          const reviewer = { api_key_id: w.caller.key.id, user_id: null }
          expect((yield* eventsOf(w, "post.approved")).map((e) => e.data))
            .toEqual([{ post_id: a.post.id, account_ids: [], reviewed_by: reviewer, note: null }])
          expect((yield* eventsOf(w, "post.changes_requested")).map((e) => e.data))
            .toEqual([{ post_id: b.post.id, account_ids: [], reviewed_by: reviewer, note: "fix the link" }])
        }))

      it.effect("a key restricted to some accounts cannot review a post outside them (404)", () =>
        Effect.gen(function*() {
          const w = yield* world
          const { record } = yield* Posts.create(w.caller, {
            content: "linkedin only",
            draft: true,
            request_approval: true,
            account_ids: [w.accounts.linkedin.id]
          })
          const error = yield* domainError(Approvals.approve(w.restricted, record.post.id, {}))
          expect(error.code).toBe("not_found")
          const visible = yield* Posts.create(w.restricted, {
            content: "x only",
            draft: true,
            request_approval: true,
            account_ids: [w.accounts.x.id]
          })
          const ok = yield* Approvals.approve(w.restricted, visible.record.post.id, {})
          expect(Option.map(ok.post.approval, (x) => x.status)).toEqual(Option.some("approved"))
        }))
    })
  })
}
