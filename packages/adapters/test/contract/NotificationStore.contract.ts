import { describe, expect, it } from "@effect/vitest"
import { UserStore } from "@herald/core/access/UserStore"
import type { OrganizationId, UserId } from "@herald/core/kernel/Ids"
import { PostStore } from "@herald/core/posts/PostStore"
import { EventStore } from "@herald/core/webhooks/EventStore"
import { NotificationStore } from "@herald/core/workflow/Notification"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import { at, event, givenOrganization, post, type StoresLayer, T0, user } from "./Fixtures.js"

const email = (name: string) => `${name}-${randomUUID().slice(0, 8)}@acme.test`

/** An organization with an owner, an admin and a member, and a post the member wrote. */
const givenTeam = Effect.gen(function*() {
  const org = yield* givenOrganization
  const users = yield* UserStore
  const owner = user(org.id, { email: email("owner"), role: "owner", createdAt: at(T0) })
  const admin = user(org.id, { email: email("admin"), role: "admin", createdAt: at(T0 + 1) })
  const member = user(org.id, { email: email("member"), role: "member", createdAt: at(T0 + 2) })
  for (const u of [owner, admin, member]) yield* users.insert(u)
  const draft = post(org.id, {
    content: "Spring launch: our new shoes are here",
    isDraft: true,
    createdStatus: "draft",
    createdBy: Option.some(member.id)
  })
  yield* (yield* PostStore).insert({ post: draft, destinations: [] })
  return { org, owner, admin, member, draft }
})

const by = (userId: UserId) => ({ api_key_id: randomUUID(), user_id: userId })

const kindsOf = (userId: UserId) =>
  Effect.flatMap(NotificationStore, (store) => store.list(userId, { limit: 50, unreadOnly: false })).pipe(
    Effect.map((list) => list.map((n) => n.kind))
  )

export const notificationStoreContract = (layer: StoresLayer) =>
  describe("NotificationStore and the notifications of appended events", () => {
    it.effect("approval requested notifies the owners and admins, not the requester; a review notifies the author", () =>
      Effect.gen(function*() {
        const { admin, draft, member, org, owner } = yield* givenTeam
        const events = yield* EventStore
        yield* events.append([
          event(org.id, {
            type: "post.approval_requested",
            data: { post_id: draft.id, requested_by: by(member.id) },
            createdAt: at(T0 + 10)
          })
        ])
        expect(yield* kindsOf(owner.id)).toEqual(["approval_requested"])
        expect(yield* kindsOf(admin.id)).toEqual(["approval_requested"])
        expect(yield* kindsOf(member.id)).toEqual([])
        const [sent] = yield* (yield* NotificationStore).list(owner.id, { limit: 5, unreadOnly: true })
        expect(sent!.title).toBe("Approval requested: “Spring launch: our new shoes are here”")
        expect(sent!.postId).toEqual(Option.some(draft.id))

        yield* events.append([
          event(org.id, {
            type: "post.approved",
            data: { post_id: draft.id, reviewed_by: by(owner.id), note: "Lovely" },
            createdAt: at(T0 + 20)
          })
        ])
        expect(yield* kindsOf(member.id)).toEqual(["approved"])
        expect(yield* kindsOf(owner.id)).toEqual(["approval_requested"])
        const [approved] = yield* (yield* NotificationStore).list(member.id, { limit: 5, unreadOnly: false })
        expect(approved!.body).toContain("with the note: Lovely")
      }).pipe(Effect.provide(layer)))

    it.effect("a failed post notifies its author and the owners and admins once, however many destinations failed", () =>
      Effect.gen(function*() {
        const { admin, draft, member, org, owner } = yield* givenTeam
        const failed = (n: number) =>
          event(org.id, {
            type: "post.failed",
            data: { post_id: draft.id, platform: "x", account_name: "acme", error: { message: "Rate limited" } },
            createdAt: at(T0 + n)
          })
        yield* (yield* EventStore).append([failed(1), failed(2)])
        yield* (yield* EventStore).append([failed(3)])
        for (const u of [owner, admin, member]) expect(yield* kindsOf(u.id)).toEqual(["post_failed"])
        const store = yield* NotificationStore
        // Read, a later failure notifies again.
        expect(yield* store.markRead(member.id, Option.none(), at(T0 + 4))).toBe(1)
        yield* (yield* EventStore).append([failed(5)])
        expect(yield* kindsOf(member.id)).toEqual(["post_failed", "post_failed"])
        expect(yield* store.unreadCount(member.id)).toBe(1)
        expect(yield* store.unreadCount(owner.id)).toBe(1)
      }).pipe(Effect.provide(layer)))

    it.effect("an account to reconnect notifies owners and admins; events nobody is told of write nothing", () =>
      Effect.gen(function*() {
        const { admin, member, org, owner } = yield* givenTeam
        yield* (yield* EventStore).append([
          event(org.id, { type: "post.published", data: {} }),
          event(org.id, {
            type: "account.reconnect_needed",
            data: { account_id: 7, platform: "bluesky", account_name: "acme.bsky.social" }
          })
        ])
        expect(yield* kindsOf(owner.id)).toEqual(["account_reconnect_needed"])
        expect(yield* kindsOf(admin.id)).toEqual(["account_reconnect_needed"])
        expect(yield* kindsOf(member.id)).toEqual([])
        const [n] = yield* (yield* NotificationStore).list(owner.id, { limit: 1, unreadOnly: false })
        expect(n!.accountId).toEqual(Option.some(7))
        expect(n!.title).toBe("Reconnect acme.bsky.social (bluesky)")
      }).pipe(Effect.provide(layer)))

    it.effect("marks the given notifications or all of them read, only the user's own; lists unread only on request", () =>
      Effect.gen(function*() {
        const { admin, draft, member, org, owner } = yield* givenTeam
        const events = yield* EventStore
        yield* events.append([
          event(org.id, {
            type: "post.approval_requested",
            data: { post_id: draft.id, requested_by: by(member.id) },
            createdAt: at(T0 + 1)
          })
        ])
        yield* events.append([
          event(org.id, {
            type: "account.reconnect_needed",
            data: { account_id: 3, platform: "x", account_name: "a" },
            createdAt: at(T0 + 2)
          })
        ])
        const store = yield* NotificationStore
        const [newest, oldest] = yield* store.list(owner.id, { limit: 10, unreadOnly: false })
        expect([newest!.kind, oldest!.kind]).toEqual(["account_reconnect_needed", "approval_requested"])
        expect(yield* store.markRead(admin.id, Option.some([newest!.id]), at(T0 + 3))).toBe(0)
        expect(yield* store.markRead(owner.id, Option.some([newest!.id]), at(T0 + 3))).toBe(1)
        expect(yield* store.markRead(owner.id, Option.some([newest!.id]), at(T0 + 4))).toBe(0)
        expect((yield* store.list(owner.id, { limit: 10, unreadOnly: true })).map((n) => n.id)).toEqual([oldest!.id])
        expect(yield* store.unreadCount(admin.id)).toBe(2)
        expect(yield* store.markRead(admin.id, Option.none(), at(T0 + 5))).toBe(2)
        expect(yield* store.unreadCount(admin.id)).toBe(0)
        const [read] = yield* store.list(owner.id, { limit: 1, unreadOnly: false })
        expect(read!.readAt).toEqual(Option.some(at(T0 + 3)))
      }).pipe(Effect.provide(layer)))

    it.effect("e-mails are claimed once per lease, retried after a failure, never again once sent or given up", () =>
      Effect.gen(function*() {
        const { draft, member, org, owner } = yield* givenTeam
        const now = T0 + 1_000_000
        yield* (yield* EventStore).append([
          event(org.id, {
            type: "post.approval_requested",
            data: { post_id: draft.id, requested_by: by(member.id) },
            createdAt: at(now)
          })
        ])
        const store = yield* NotificationStore
        const mine = <A extends { readonly notification: { readonly organizationId: OrganizationId } }>(
          claimed: ReadonlyArray<A>
        ) => claimed.filter((c) => c.notification.organizationId === org.id)
        const claim = (t: number) =>
          store.claimEmails({ now: at(t), createdAfter: at(now - 1), limit: 100, leaseMillis: 60_000 })
        const first = mine(yield* claim(now))
        expect(first.map((c) => [c.email, c.attempts]).sort()).toEqual(
          [[owner.email, 1], [expect.stringContaining("admin-"), 1]].sort()
        )
        expect(mine(yield* claim(now + 59_999))).toEqual([])
        const toOwner = first.find((c) => c.email === owner.email)!
        const toAdmin = first.find((c) => c.email !== owner.email)!
        yield* store.emailSent(toOwner.notification.id, at(now + 1))
        yield* store.emailFailed(toAdmin.notification.id, Option.some(at(now + 5_000)))
        const retried = mine(yield* claim(now + 5_000))
        expect(retried.map((c) => [c.notification.id, c.attempts])).toEqual([[toAdmin.notification.id, 2]])
        yield* store.emailFailed(toAdmin.notification.id, Option.none())
        expect(mine(yield* claim(now + 10_000_000))).toEqual([])
        // Old notifications are not e-mailed (a sender configured later does not send the backlog).
        yield* (yield* EventStore).append([
          event(org.id, {
            type: "account.reconnect_needed",
            data: { account_id: 9, platform: "x", account_name: "b" },
            createdAt: at(now - 10)
          })
        ])
        expect(mine(yield* claim(now + 10_000_000))).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("a removed user is not notified", () =>
      Effect.gen(function*() {
        const { admin, draft, member, org, owner } = yield* givenTeam
        yield* (yield* UserStore).remove(admin.id)
        yield* (yield* EventStore).append([
          event(org.id, { type: "post.approval_requested", data: { post_id: draft.id, requested_by: by(member.id) } })
        ])
        expect(yield* kindsOf(owner.id)).toEqual(["approval_requested"])
        expect(yield* kindsOf(admin.id)).toEqual([])
      }).pipe(Effect.provide(layer)))
  })
