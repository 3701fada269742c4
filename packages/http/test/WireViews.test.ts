/**
 * Views answered in their wire shape without the schema's encode pass (Envelope.respond) must be
 * byte for byte what the encode pass gives: same fields, same order, same values.
 */
import type { SocialAccount } from "@herald/core/accounts/Account"
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
    const scheduled = post(org, { scheduledFor: Option.some(at(T0 + 3_600_000)), timezone: Option.some("Europe/Paris") })
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
})
