/**
 * The edge's limits in-process: the one-pass JSON scan (depth, members, `\u0000`, strings that look
 * like structure), the NUL path, URLs, and the clipping of quoted values in error bodies.
 */
import { describe, expect, it } from "@effect/vitest"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { DomainError } from "@herald/core/kernel/Errors"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Envelope from "../src/Envelope.js"
import * as InputLimits from "../src/InputLimits.js"

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth)

describe("scanJson", () => {
  it("32 levels pass, 33 are too deep; brackets inside strings do not count", () => {
    expect(InputLimits.scanJson(nested(32))).toBeUndefined()
    expect(InputLimits.scanJson(nested(33))).toEqual({ _tag: "TooDeep" })
    expect(InputLimits.scanJson(`{"a":"${"[".repeat(100)}"}`)).toBeUndefined()
    expect(InputLimits.scanJson(`{"a":"\\"${"{".repeat(100)}"}`)).toBeUndefined()
    expect(InputLimits.scanJson(nested(100_000))).toEqual({ _tag: "TooDeep" })
  })

  it("1,000 members pass, 1,001 are too many (commas inside strings do not count)", () => {
    expect(InputLimits.scanJson(JSON.stringify(Array.from({ length: 1000 }, () => 0)))).toBeUndefined()
    expect(InputLimits.scanJson(JSON.stringify(Array.from({ length: 1001 }, () => 0)))).toEqual({
      _tag: "TooManyMembers"
    })
    expect(InputLimits.scanJson(JSON.stringify({ a: ",".repeat(5000) }))).toBeUndefined()
  })

  it("finds the \\u0000 escape, not an escaped backslash before u0000", () => {
    expect(InputLimits.scanJson(JSON.stringify({ a: "x\u0000" }))).toEqual({ _tag: "Nul" })
    expect(InputLimits.scanJson(JSON.stringify({ ["k\u0000"]: 1 }))).toEqual({ _tag: "Nul" })
    expect(InputLimits.scanJson(JSON.stringify({ a: "\\u0000" }))).toBeUndefined()
    expect(InputLimits.scanJson(JSON.stringify({ a: "\u0001" }))).toBeUndefined()
  })

  it.prop("on any JSON value: too deep exactly when deeper than 32, NUL exactly when a string holds one", [
    FastCheck.jsonValue({ maxDepth: 40 })
  ], ([value]) => {
    const depthOf = (v: unknown): number => {
      let max = 0
      const stack: Array<readonly [unknown, number]> = [[v, 0]]
      while (stack.length > 0) {
        const [x, d] = stack.pop()!
        if (typeof x === "object" && x !== null) {
          max = Math.max(max, d + 1)
          for (const y of Object.values(x)) stack.push([y, d + 1])
        }
      }
      return max
    }
    const problem = InputLimits.scanJson(JSON.stringify(value))
    if (depthOf(value) > 32) expect(problem).toEqual({ _tag: "TooDeep" })
    else if (InputLimits.nulPath(value) !== undefined) expect(problem).toEqual({ _tag: "Nul" })
    else expect(problem).toBeUndefined()
  }, { fastCheck: { numRuns: 300 } })
})

describe("withBody", () => {
  it.effect("the handlers read the body already read, also from a modified request", () =>
    Effect.gen(function*() {
      const original = HttpServerRequest.fromWeb(
        new Request("http://localhost/api/v1/x", { method: "POST", body: "ignored" })
      )
      const request = InputLimits.withBody(original, `{"a":1}`)
      expect(yield* request.text).toBe(`{"a":1}`)
      expect(yield* request.json).toEqual({ a: 1 })
      expect(request.method).toBe("POST")
      const modified = request.modify({ url: "/x" })
      expect(modified.url).toBe("/x")
      expect(yield* modified.text).toBe(`{"a":1}`)
      const bad = InputLimits.withBody(original, "{")
      expect((yield* Effect.flip(bad.json))._tag).toBe("RequestError")
    }))
})

describe("shapeError and urlError", () => {
  it("a NUL is reported at its path", () => {
    const text = JSON.stringify({ content: "ok", threadPosts: [{ content: "a" }, { content: "b\u0000" }] })
    const error = InputLimits.shapeError({ _tag: "Nul" }, text)
    expect(error.code).toBe("validation_error")
    expect(error.details?.["validation_errors"]).toEqual([
      { path: "threadPosts.1.content", message: "Must not contain the NUL character (U+0000)" }
    ])
  })

  it("a URL with %00 in its path or query is refused; %2500 is not a NUL", () => {
    expect(InputLimits.urlError("/api/v1/posts?search=%00")?.details?.["validation_errors"]).toEqual([
      { path: "query", message: expect.stringContaining("U+0000") }
    ])
    expect(InputLimits.urlError("/api/v1/posts/%00")?.details?.["validation_errors"]).toEqual([
      { path: "path", message: expect.stringContaining("U+0000") }
    ])
    expect(InputLimits.urlError("/api/v1/posts?search=%2500")).toBeUndefined()
  })
})

describe("error bodies quote at most 100 characters of a value", () => {
  it("a schema message's actual value is cut; long strings anywhere are cut; short ones kept", () => {
    const huge = "v".repeat(2_000_000)
    const error = DomainError.of("validation_error", `account_ids: Expected ReadonlyArray<Int>, actual "${huge}"`, {
      validation_errors: [{ path: "account_ids", message: `Expected ReadonlyArray<Int>, actual "${huge}"` }],
      timezone: huge,
      hint: "h".repeat(900)
    })
    const body = JSON.stringify(Envelope.errorObject(error))
    expect(body.length).toBeLessThan(2_000)
    expect(body).not.toContain("v".repeat(101))
    expect(body).toContain("h".repeat(900))
    expect(Envelope.clip(`Expected number, actual "${"x".repeat(50)}"`)).toBe(
      `Expected number, actual "${"x".repeat(50)}"`
    )
  })
})
