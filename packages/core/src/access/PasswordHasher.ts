/**
 * Password hashing behind a port (the adapter uses scrypt from node:crypto). A hash names its own
 * algorithm and parameters, so stronger parameters later still verify older hashes.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"

export class PasswordHasher extends Context.Tag("@herald/core/access/PasswordHasher")<PasswordHasher, {
  readonly hash: (password: Redacted.Redacted<string>) => Effect.Effect<string>
  /** False for a wrong password and for a hash it cannot read. */
  readonly verify: (password: Redacted.Redacted<string>, hash: string) => Effect.Effect<boolean>
}>() {}
