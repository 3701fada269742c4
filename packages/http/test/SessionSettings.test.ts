import { describe, expect, it } from "vitest"
import * as Config from "../src/Config.js"

describe("session and sign-in settings at start", () => {
  it("refuses a non-positive or non-integer session timeout or sign-in limit, naming the variable", () => {
    expect(Config.problems({
      HERALD_SESSION_IDLE_SECONDS: "0",
      HERALD_SESSION_ABSOLUTE_SECONDS: "1.5",
      HERALD_SIGN_IN_LIMIT_PER_MINUTE: "ten",
      HERALD_SIGN_IN_FAILURES_PER_HOUR: "-1"
    })).toEqual([
      "HERALD_SESSION_IDLE_SECONDS: expected a positive integer, got '0'",
      "HERALD_SESSION_ABSOLUTE_SECONDS: expected a positive integer, got '1.5'",
      "HERALD_SIGN_IN_LIMIT_PER_MINUTE: expected a positive integer, got 'ten'",
      "HERALD_SIGN_IN_FAILURES_PER_HOUR: expected a positive integer, got '-1'"
    ])
    expect(Config.problems({ HERALD_SESSION_IDLE_SECONDS: "3600", HERALD_SIGN_IN_FAILURES_PER_HOUR: "5" })).toEqual([])
  })
})
