/**
 * A destination whose outcome is unknown says so in its view: `error_code` `outcome_unknown` and a
 * `retry_warning` that a retry may post it twice; every other destination has both null.
 */
import { OrganizationId } from "@herald/core/kernel/Ids"
import * as Dispatcher from "@herald/core/publishing/Dispatcher"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import { accountValue, destination, post } from "../../adapters/test/contract/Fixtures.js"
import { DestinationView, outcomeUnknownRetryWarning, toDestinationView } from "../src/groups/Retry.js"

const org = OrganizationId.make("00000000-0000-4000-8000-000000000001")

describe("a destination's unknown outcome in the API", () => {
  const p = post(org)
  const a = accountValue(org, 1)

  it("outcome unknown: error_code outcome_unknown and a warning that a retry may post it twice", () => {
    const view = toDestinationView(
      destination({ post: p, account: a }, { status: "failed", error: Option.some(Dispatcher.unknownOutcomeMessage) })
    )
    expect(view.error_code).toBe("outcome_unknown")
    expect(view.retry_warning).toBe(outcomeUnknownRetryWarning)
    expect(view.retry_warning).toContain("twice")
    expect(JSON.stringify(view)).toBe(JSON.stringify(Schema.encodeSync(DestinationView)(view)))
  })

  it("any other failure, a re-queued attempt and a published destination: both null", () => {
    for (
      const d of [
        destination({ post: p, account: a }, { status: "failed", error: Option.some("X: Unauthorized") }),
        destination({ post: p, account: a }, { status: "queued", error: Option.some(Dispatcher.absentOutcomeMessage) }),
        destination({ post: p, account: a }, { status: "published" })
      ]
    ) {
      const view = toDestinationView(d)
      expect([view.error_code, view.retry_warning]).toEqual([null, null])
    }
  })
})
