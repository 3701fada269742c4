/**
 * Rules a platform documents for its requests, for the fakes of platforms that publish no
 * machine-readable description (Meta, LinkedIn, TikTok). Each rule names the page it comes from; a fake
 * checks every request it receives against its rules, answers a broken one with the platform's own
 * error shape, and records it in `violations`, which the tests assert is empty (`expectNone`), so a
 * client that breaks a documented rule fails its test even where it would tolerate the error.
 */
import type { Recorded } from "./FakeServer.js"

export interface Violation {
  readonly request: string
  readonly rule: string
  readonly source: string
}

export interface Rule {
  /** What the platform requires, in words. */
  readonly rule: string
  /** The documentation page it comes from. */
  readonly source: string
}

export class Rulebook {
  readonly violations: Array<Violation> = []

  /**
   * Checks `ok`; when it fails, records the rule and returns the message for the error answer
   * (`undefined` when the rule holds).
   */
  check(request: Recorded, ok: boolean, rule: Rule): string | undefined {
    if (ok) return undefined
    this.violations.push({ request: `${request.method} ${request.path}`, rule: rule.rule, source: rule.source })
    return `${rule.rule} (${rule.source})`
  }

  /** The first failed rule among `checks`, recorded; `undefined` when all hold. */
  first(request: Recorded, checks: ReadonlyArray<readonly [boolean, Rule]>): string | undefined {
    for (const [ok, rule] of checks) {
      const broken = this.check(request, ok, rule)
      if (broken !== undefined) return broken
    }
    return undefined
  }

  /** Throws (failing the test) when any request broke a rule. */
  expectNone(): void {
    if (this.violations.length > 0) {
      throw new Error(
        "requests broke documented platform rules:\n" +
          this.violations.map((v) => `  ${v.request}: ${v.rule} (${v.source})`).join("\n")
      )
    }
  }
}

/** The declared `Content-Length`, when the request has one, matches the bytes received. */
export const lengthMatches = (request: Recorded): boolean => {
  const declared = request.headers["content-length"]
  return declared === undefined || Number(declared) === request.body.length
}
