import { describe, expect, it } from "@effect/vitest"
import { SqlError } from "@effect/sql/SqlError"
import { PersistenceError } from "@herald/core/kernel/Errors"
import * as Cause from "effect/Cause"
import { isStoreUnavailable } from "../../src/sql/StoreFaults.js"

const dropped = Object.assign(new Error("Connection terminated unexpectedly"), {})
const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" })
const syntax = Object.assign(new Error("syntax error at or near \"SELEC\""), { code: "42601" })

describe("StoreFaults.isStoreUnavailable", () => {
  it("recognises a dropped or refused connection through PersistenceError and SqlError", () => {
    const viaSql = (cause: unknown) =>
      new PersistenceError({ message: "X failed", cause: new SqlError({ cause, message: "Connection error" }) })
    expect(isStoreUnavailable(viaSql(dropped))).toBe(true)
    expect(isStoreUnavailable(viaSql(refused))).toBe(true)
    expect(isStoreUnavailable(viaSql(syntax))).toBe(false)
  })

  it("follows an Effect Cause held as the cause (a batch failing every waiter with its statement's cause)", () => {
    const batchFailure = (cause: unknown) =>
      new PersistenceError({
        message: "RequestCounters.incrementWithin failed",
        cause: Cause.sequential(
          Cause.fail(new SqlError({ cause, message: "Connection error" })),
          Cause.empty
        )
      })
    expect(isStoreUnavailable(batchFailure(dropped))).toBe(true)
    expect(isStoreUnavailable(new PersistenceError({ message: "died", cause: Cause.die(refused) }))).toBe(true)
    expect(isStoreUnavailable(batchFailure(syntax))).toBe(false)
  })
})
