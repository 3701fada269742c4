/** Meta's error answers (platform reference §5) as error classes, with secrets scrubbed. */
import { describe, expect, it } from "vitest"
import * as MetaGraph from "../../src/platforms/internal/MetaGraph.js"
import type { RawResponse } from "../../src/platforms/internal/PlatformHttp.js"

const meta = (status: number, error: Record<string, unknown>, headers: Record<string, string> = {}): RawResponse => ({
  status,
  headers,
  text: "",
  body: { error: { type: "OAuthException", fbtrace_id: "AbC", ...error } }
})

describe("Meta Graph error classification", () => {
  it.each(
    [
      [
        "190 invalid token",
        meta(400, { code: 190, message: "Invalid OAuth access token - Cannot parse access token" }),
        "auth"
      ],
      [
        "190/463 expired",
        meta(400, { code: 190, error_subcode: 463, message: "Error validating access token: Session has expired" }),
        "auth"
      ],
      [
        "10 permission",
        meta(403, { code: 10, message: "Application does not have permission for this action" }),
        "auth"
      ],
      ["200 permission", meta(403, { code: 200, message: "Permissions error" }), "auth"],
      ["4 app rate limit", meta(400, { code: 4, message: "Application request limit reached" }), "rate_limit"],
      ["17 user rate limit", meta(400, { code: 17, message: "User request limit reached" }), "rate_limit"],
      ["32 page rate limit", meta(400, { code: 32, message: "Page request limit reached" }), "rate_limit"],
      [
        "613 rate limit",
        meta(400, { code: 613, message: "Calls to this api have exceeded the rate limit." }),
        "rate_limit"
      ],
      [
        "80001 business use case",
        meta(400, { code: 80001, message: "There have been too many calls to this Page account." }),
        "rate_limit"
      ],
      ["1 unknown", meta(500, { code: 1, message: "An unknown error occurred" }), "transient"],
      [
        "2 transient",
        meta(503, { code: 2, message: "An unexpected error has occurred.", is_transient: true }),
        "transient"
      ],
      ["bare 502", { status: 502, headers: {}, text: "<html>Bad Gateway</html>", body: undefined }, "transient"],
      ["506 duplicate", meta(400, { code: 506, message: "Duplicate status message" }), "duplicate"],
      ["100 invalid parameter", meta(400, { code: 100, message: "Invalid parameter" }), "permanent"],
      [
        "368 policy block",
        meta(400, { code: 368, message: "It looks like you were misusing this feature" }),
        "permanent"
      ]
    ] as const
  )("%s", (_name, response, kind) => {
    expect(MetaGraph.classify("Facebook", response, []).kind).toBe(kind)
  })

  it("at the OAuth endpoints a refusal that is not a limit or an outage is auth", () => {
    const refused = meta(400, { code: 100, error_subcode: 36009, message: "This authorization code has been used." })
    expect(MetaGraph.classify("Facebook", refused, [], "oauth").kind).toBe("auth")
    expect(MetaGraph.classify("Facebook", refused, [], "graph").kind).toBe("permanent")
    expect(MetaGraph.classify("Facebook", meta(400, { code: 4, message: "limit" }), [], "oauth").kind).toBe(
      "rate_limit"
    )
  })

  it("rate limits carry the wait from X-Business-Use-Case-Usage (minutes), else Retry-After", () => {
    const usage = JSON.stringify({
      "501": [{ type: "pages", call_count: 100, total_cputime: 30, total_time: 40, estimated_time_to_regain_access: 7 }]
    })
    const limited = MetaGraph.classify(
      "Facebook",
      meta(400, { code: 32, message: "Page request limit reached" }, {
        "x-business-use-case-usage": usage
      }),
      []
    )
    expect(limited).toMatchObject({ kind: "rate_limit", retryAfterSeconds: 420 })
    const retryAfter = MetaGraph.classify("Threads", {
      status: 429,
      headers: { "retry-after": "30" },
      text: "",
      body: undefined
    }, [])
    expect(retryAfter).toMatchObject({ kind: "rate_limit", retryAfterSeconds: 30 })
  })

  it("messages name the platform, Meta's reason and code, and none of the secrets", () => {
    const error = MetaGraph.classify(
      "Threads",
      meta(400, {
        code: 190,
        error_subcode: 460,
        message: "Error validating access token for THAAtoken-123456: password changed"
      }),
      ["THAAtoken-123456"]
    )
    expect(error.message).toBe(
      "Threads: Error validating access token for [redacted]: password changed (code 190, subcode 460)"
    )
    // api.instagram.com's older shape, whose `code` repeats the HTTP status.
    const older = MetaGraph.classify(
      "Instagram",
      {
        status: 400,
        headers: {},
        text: "",
        body: {
          error_type: "OAuthException",
          code: 400,
          error_message: "Matching code was not found or was already used."
        }
      },
      [],
      "oauth"
    )
    expect(older).toMatchObject({
      kind: "auth",
      message: "Instagram: Matching code was not found or was already used."
    })
  })
})
