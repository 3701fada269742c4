/**
 * Decoding a request body that arrived as parsed JSON against its Schema, with every problem reported
 * the way the API's `validation_error` carries them (`details.validation_errors`, one `{path, message}`
 * each): shared by every use case that takes a body.
 */
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { DomainError } from "./Errors.js"

/** One problem with a request body: a dotted path in the body and what is wrong there. */
export interface BodyIssue {
  readonly path: string
  readonly message: string
}

const nullishAlternative = /^Expected (null|undefined), actual /

/**
 * Every problem, as `{path, message}`. A nullable field that fails reports its real problem plus
 * "Expected null" and "Expected undefined" for the union's other members: those two are dropped
 * when the real problem is reported at the same path or below it.
 */
export const issuesOf = (error: ParseResult.ParseError): ReadonlyArray<BodyIssue> => {
  const all = ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
    path: issue.path.map(String).join("."),
    message: issue.message
  }))
  const within = (path: string, other: string) => other === path || other.startsWith(`${path}.`)
  return all.filter((issue) =>
    !nullishAlternative.test(issue.message) ||
    !all.some((other) => !nullishAlternative.test(other.message) && within(issue.path, other.path))
  )
}

/** Decodes a body, reporting every problem in `details.validation_errors` (unknown fields are ignored). */
export const decodeBody = <A, I>(schema: Schema.Schema<A, I>, raw: unknown): Effect.Effect<A, DomainError> =>
  Schema.decodeUnknown(schema, { errors: "all", onExcessProperty: "ignore" })(raw).pipe(
    Effect.mapError((error) =>
      DomainError.of("validation_error", "The request did not match the expected schema", {
        validation_errors: issuesOf(error)
      })
    )
  )
