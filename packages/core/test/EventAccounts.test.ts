/** Which events a subscription scoped to accounts receives, and which subscriptions a restricted key manages. */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { AccountId, OrganizationId, WebhookId } from "../src/kernel/Ids.js"
import type { EventType } from "../src/webhooks/Event.js"
import * as EventAccounts from "../src/webhooks/EventAccounts.js"
import { WebhookSubscription } from "../src/webhooks/Webhook.js"
import * as Webhooks from "../src/webhooks/Webhooks.js"

const ids = (...n: ReadonlyArray<number>) => n.map((x) => AccountId.make(x))
const about = (type: EventType, data: Record<string, unknown>) => ({ type, data })
const org = OrganizationId.make("00000000-0000-4000-8000-000000000001")

const subscription = (accountIds: Option.Option<ReadonlyArray<AccountId>>) =>
  new WebhookSubscription({
    id: WebhookId.make("00000000-0000-4000-8000-0000000000aa"),
    organizationId: org,
    url: "https://hooks.example.com/h",
    events: ["post.published"],
    name: Option.none(),
    accountIds,
    secret: Redacted.make(`whsec_${"A".repeat(64)}`),
    isActive: true,
    consecutiveFailures: 0,
    createdAt: DateTime.unsafeMake(0),
    updatedAt: DateTime.unsafeMake(0)
  })

describe("EventAccounts", () => {
  it("reads account_id, account_ids and destinations[].account_id; media events are about no account", () => {
    expect(EventAccounts.accountsOf(about("post.published", { account_id: 3, post_id: "p" }))).toEqual([3])
    expect(EventAccounts.accountsOf(about("post.scheduled", { account_ids: [1, 2, 1] }))).toEqual([1, 2])
    expect(
      EventAccounts.accountsOf(about("post.partially_failed", { destinations: [{ account_id: 4 }, { account_id: 5 }] }))
    ).toEqual([4, 5])
    expect(EventAccounts.accountsOf(about("post.approved", { post_id: "p" }))).toEqual([])
    expect(EventAccounts.accountsOf(about("media.uploaded", { account_id: 1 }))).toEqual([])
    expect(EventAccounts.accountsOf(about("post.scheduled", { account_ids: ["1", -2, 1.5] }))).toEqual([])
  })

  it("a scoped subscription receives an event only when every account it is about is in scope", () => {
    const scope = Option.some(ids(1, 2))
    expect(EventAccounts.reaches(scope, about("post.scheduled", { account_ids: [1, 2] }))).toBe(true)
    expect(EventAccounts.reaches(scope, about("post.scheduled", { account_ids: [2, 3] }))).toBe(false)
    expect(EventAccounts.reaches(scope, about("post.scheduled", { account_ids: [] }))).toBe(false)
    expect(EventAccounts.reaches(scope, about("media.deleted", {}))).toBe(false)
    expect(EventAccounts.reaches(Option.none(), about("media.deleted", {}))).toBe(true)
    expect(EventAccounts.reaches(Option.none(), about("post.scheduled", { account_ids: [9] }))).toBe(true)
  })

  it("a restricted manager manages subscriptions scoped within its accounts only; an unrestricted one all", () => {
    const restricted = { organizationId: org, accountIds: Option.some(ids(1, 2)) }
    const unrestricted = { organizationId: org, accountIds: Option.none() }
    expect(Webhooks.canManage(restricted, subscription(Option.some(ids(1))))).toBe(true)
    expect(Webhooks.canManage(restricted, subscription(Option.some(ids(1, 2))))).toBe(true)
    expect(Webhooks.canManage(restricted, subscription(Option.some(ids(1, 3))))).toBe(false)
    expect(Webhooks.canManage(restricted, subscription(Option.none()))).toBe(false)
    expect(Webhooks.canManage(unrestricted, subscription(Option.some(ids(7))))).toBe(true)
    expect(Webhooks.canManage(unrestricted, subscription(Option.none()))).toBe(true)
  })

  it.effect("a restricted manager cannot name organization-level events", () =>
    Effect.gen(function*() {
      const refused = yield* Effect.flip(Webhooks.checkEvents(["post.published", "media.uploaded"], true))
      expect(refused.code).toBe("invalid_event_type")
      expect(refused.details).toEqual({
        valid_events: [...EventAccounts.accountEvents],
        invalid_events: ["media.uploaded"]
      })
      expect(yield* Webhooks.checkEvents(["media.uploaded"], false)).toEqual(["media.uploaded"])
    }))
})
