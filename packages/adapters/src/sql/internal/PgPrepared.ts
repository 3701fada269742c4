/**
 * Prepared (named) statements on Postgres, for the statements a store marks as such.
 *
 * @effect/sql-pg sends every statement unnamed, so Postgres parses and plans it on every execution:
 * ~90 us of Postgres CPU for each of the hot statements of a create (statement log). A statement whose
 * text begins with `marker` is sent named instead, under a hash of its text, so each connection parses
 * it once and Postgres may keep its plan. Only the author of a statement knows it is safe to mark:
 * - its text takes a bounded number of shapes (no list whose length varies without bound), since each
 *   shape stays prepared on the connection for its lifetime (`maxNamed` bounds them anyway);
 * - it names its result columns (no `SELECT *`, no `RETURNING *`): a prepared `SELECT *` fails with
 *   "cached plan must not change result type" once another process's migration adds a column;
 * - a generic plan suits it whatever its parameters (a key lookup, an insert), since Postgres switches
 *   to one after five executions when it looks no worse.
 * Unmarked statements, and statements without parameters, are sent as before.
 */
import Pg from "pg"
import * as crypto from "node:crypto"

/** Put first in a statement's text to have it prepared on Postgres (a comment, inert on SQLite). */
export const marker = "/* herald:prepared */"

/** Prepared statements per connection at most; past it, marked statements go unnamed. */
export const maxNamed = 256

const nameOf = (text: string): string => `herald_${crypto.createHash("sha1").update(text).digest("base64url")}`

/** The pg client `SqlDatabase.layerPg` gives its pool: `Pg.Client`, naming marked statements. */
export class PreparingClient extends Pg.Client {
  private readonly named = new Set<string>()

  override query(...args: Array<unknown>): never {
    const [text, values, callback] = args
    if (
      typeof text === "string" && text.startsWith(marker) && Array.isArray(values) && values.length > 0 &&
      typeof callback === "function"
    ) {
      const name = nameOf(text)
      if (this.named.has(name) || this.named.size < maxNamed) {
        this.named.add(name)
        return super.query({ name, text, values }, callback as never) as never
      }
    }
    return (super.query as (...a: Array<unknown>) => unknown)(...args) as never
  }
}
