/**
 * Views answered in their wire shape without the schema's encode pass (Envelope.respond) must be
 * byte for byte what the encode pass gives: same fields, same order, same values.
 */
import { SocialAccount } from "@herald/core/domain/Account"
import { OrganizationId } from "@herald/core/kernel/Ids"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import { accountValue, at, destination, post, T0 } from "../../adapters/test/contract/Fixtures.js"
import * as AccountView from "../src/AccountView.js"
import { AccountList } from "../src/groups/Accounts.js"
import { PostView, toPostView } from "../src/groups/Posts.js"

const org = OrganizationId.make("00000000-0000-4000-8000-000000000001")

describe("wire views", () => {
  it("a post view (draft, scheduled with destinations) is its own encoding", () => {
    const draft = post(org, { isDraft: true, createdStatus: "draft" })
    const scheduled = post(org, {
      scheduledFor: Option.some(at(T0 + 3_600_000)),
      timezone: Option.some("Europe/Paris")
    })
    const [a1, a2] = [1, 2].map((id) => accountValue(org, id)) as [SocialAccount, SocialAccount]
    const records = [
      { post: draft, destinations: [] },
      {
        post: scheduled,
        destinations: [
          destination({ post: scheduled, account: a1 }),
          destination({ post: scheduled, account: a2 }, { status: "published", publishedAt: Option.some(at(T0 + 5)) })
        ]
      }
    ]
    for (const record of records) {
      for (const extra of [{}, { scheduledAtSent: true, nextSteps: "next" }]) {
        const view = toPostView(record, extra)
        expect(JSON.stringify(view)).toBe(JSON.stringify(Schema.encodeSync(PostView)(view)))
      }
    }
  })

  it("an account list is its own encoding", () => {
    const accounts = [1, 2].map((id) => accountValue(org, id))
    const list = { accounts: accounts.map((a) => AccountView.toAccount(a, at(T0))) }
    expect(JSON.stringify(list)).toBe(JSON.stringify(Schema.encodeSync(AccountList)(list)))
  })

  it("an account's memoised JSON text is its view's text, made again when its health changes", () => {
    const hour = 3_600_000
    const account = accountValue(org, 1, {
      accountName: "Ünïcödé 👋 \"quoted\" \u2028",
      tokenExpiresAt: Option.some(at(T0 + 10 * 24 * hour))
    })
    // healthy, then expiring soon (warning), then expired (broken), then a time before: healthy again.
    for (const now of [T0, T0 + 4 * 24 * hour, T0 + 11 * 24 * hour, T0]) {
      for (let i = 0; i < 2; i++) {
        expect(AccountView.toAccountJson(account, at(now))).toBe(
          JSON.stringify(AccountView.toAccount(account, at(now)))
        )
      }
    }
    // A changed account is a new value, with its own text.
    const renamed = new SocialAccount({ ...account, accountName: "renamed", isActive: false })
    expect(AccountView.toAccountJson(renamed, at(T0))).toBe(JSON.stringify(AccountView.toAccount(renamed, at(T0))))
    expect(JSON.parse(AccountView.toAccountJson(renamed, at(T0)))).toMatchObject({
      account_name: "renamed",
      is_active: false,
      health: { status: "broken" }
    })
    expect(AccountView.toAccountJson(account, at(T0))).toBe(JSON.stringify(AccountView.toAccount(account, at(T0))))
  })
})
