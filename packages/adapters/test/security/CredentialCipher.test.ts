/**
 * Credentials at rest: AES-256-GCM with a fresh IV per value, keys from HERALD_SECRET or a 0600 key
 * file in the data dir, and the SQL account store sealing its credentials column. The raw row and the
 * database file are read directly to show the token is not there in plaintext.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { AccountStore } from "@herald/core/accounts/AccountStore"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as CredentialCipher from "../../src/security/CredentialCipher.js"
import * as SqlAccountStore from "../../src/sql/SqlAccountStore.js"
import * as SqlDatabase from "../../src/sql/SqlDatabase.js"
import * as SqlStores from "../../src/sql/SqlStores.js"
import * as NodeIdGenerator from "../../src/NodeIdGenerator.js"
import { givenOrganization, newAccount } from "../contract/Fixtures.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "herald-cipher-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

const secret = (s: string) => ({ secret: Redacted.make(s), dataDir: "/nonexistent-herald-dir" })

const token = "xat-THE-ACCESS-TOKEN-must-never-be-stored-plain"

describe("CredentialCipher", () => {
  it.effect("seals with a fresh IV each time, in the versioned format, and opens what it sealed", () =>
    Effect.gen(function*() {
      const cipher = yield* CredentialCipher.make(secret("one secret"))
      const a = yield* cipher.seal(token)
      const b = yield* cipher.seal(token)
      expect(a).not.toBe(b)
      expect(a.startsWith("hc1.")).toBe(true)
      expect(a).not.toContain(token)
      const [iv] = a.slice(4).split(".")
      expect(Buffer.from(iv!, "base64url")).toHaveLength(12)
      expect(yield* cipher.open(a)).toBe(token)
      expect(yield* cipher.open(b)).toBe(token)
    }))

  it.effect("another secret cannot open it; an altered value is refused", () =>
    Effect.gen(function*() {
      const sealed = yield* (yield* CredentialCipher.make(secret("one secret"))).seal(token)
      const other = yield* CredentialCipher.make(secret("another secret"))
      const refused = yield* Effect.flip(other.open(sealed))
      expect(refused.reason).toBe("undecryptable")
      expect(refused.message).not.toContain(token)
      const same = yield* CredentialCipher.make(secret("one secret"))
      // A character of the tag changed to another (it was chosen from the LAST character: when the
      // changed one was already "A", nothing changed and the value opened, one run in 64).
      const at = sealed.length - 3
      const flipped = sealed.slice(0, at) + (sealed[at] === "A" ? "B" : "A") + sealed.slice(at + 1)
      expect(flipped).not.toBe(sealed)
      expect((yield* Effect.flip(same.open(flipped))).reason).toBe("undecryptable")
    }))

  it.effect("reads a value written before encryption as it is", () =>
    Effect.gen(function*() {
      const cipher = yield* CredentialCipher.make(secret("s"))
      expect(yield* cipher.open("{\"webhook_url\":\"x\"}")).toBe("{\"webhook_url\":\"x\"}")
    }))

  it.scoped("without HERALD_SECRET: generates a 0600 key file once, on first use, and reuses it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const dataDir = path.join(dir, "data")
      const first = yield* CredentialCipher.make({ dataDir })
      expect(fs.existsSync(path.join(dataDir, "secret.key"))).toBe(false)
      const sealed = yield* first.seal(token)
      const file = path.join(dataDir, "secret.key")
      expect(fs.statSync(file).mode & 0o777).toBe(0o600)
      const key = fs.readFileSync(file, "utf8")
      const second = yield* CredentialCipher.make({ dataDir })
      expect(yield* second.open(sealed)).toBe(token)
      expect(fs.readFileSync(file, "utf8")).toBe(key)
      // HERALD_SECRET, when set, wins over the file: the file's key does not open its values.
      const withSecret = yield* CredentialCipher.make({ dataDir, secret: Redacted.make("explicit") })
      expect((yield* Effect.flip(withSecret.open(sealed))).reason).toBe("undecryptable")
    }))

  it.effect("derives distinct secrets per purpose", () =>
    Effect.gen(function*() {
      const cipher = yield* CredentialCipher.make(secret("s"))
      const a = Redacted.value(yield* cipher.deriveSecret("connect-state/v1"))
      const b = Redacted.value(yield* cipher.deriveSecret("other"))
      expect(a).toMatch(/^[0-9a-f]{64}$/)
      expect(a).not.toBe(b)
      expect(Redacted.value(yield* cipher.deriveSecret("connect-state/v1"))).toBe(a)
    }))
})

describe("SqlAccountStore with a cipher", () => {
  const storeOn = (filename: string, source: CredentialCipher.KeySource) =>
    SqlStores.layer.pipe(
      Layer.provide(CredentialCipher.layer(source)),
      Layer.provideMerge(NodeIdGenerator.layer),
      Layer.provideMerge(SqlDatabase.layer({ _tag: "Sqlite", filename }))
    )

  it.scoped("the raw row and the database file hold no plaintext token; a different secret cannot decrypt", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const filename = path.join(dir, "herald.db")
      const credentials = JSON.stringify({ access_token: token, refresh_token: "xrt-REFRESH-never-plain" })
      const account = yield* Effect.gen(function*() {
        const org = yield* givenOrganization
        const store = yield* AccountStore
        const inserted = yield* store.insert(
          newAccount(org.id, { credentials: Option.some(Redacted.make(credentials)) })
        )
        const sql = yield* SqlClient.SqlClient
        const raw = yield* sql<
          { credentials: string }
        >`SELECT credentials FROM social_accounts WHERE id = ${inserted.id}`
        expect(raw[0]!.credentials.startsWith("hc1.")).toBe(true)
        expect(raw[0]!.credentials).not.toContain(token)
        // Read back through the store: the same credentials.
        const found = yield* store.findById(org.id, inserted.id)
        expect(Option.map(Option.flatMap(found, (a) => a.credentials), Redacted.value)).toEqual(
          Option.some(credentials)
        )
        // Updates are sealed too.
        yield* store.update(Option.getOrThrow(found))
        const again = yield* sql<
          { credentials: string }
        >`SELECT credentials FROM social_accounts WHERE id = ${inserted.id}`
        expect(again[0]!.credentials).not.toBe(raw[0]!.credentials)
        expect(again[0]!.credentials).not.toContain(token)
        yield* sql.unsafe("PRAGMA wal_checkpoint(TRUNCATE)")
        return inserted
      }).pipe(Effect.provide(storeOn(filename, secret("the right secret"))))

      for (const file of [filename, `${filename}-wal`]) {
        if (!fs.existsSync(file)) continue
        const bytes = fs.readFileSync(file)
        expect(bytes.includes(Buffer.from(token))).toBe(false)
        expect(bytes.includes(Buffer.from("xrt-REFRESH-never-plain"))).toBe(false)
      }

      const wrong = yield* Effect.exit(
        Effect.flatMap(AccountStore, (store) => store.findById(account.organizationId, account.id)).pipe(
          Effect.provide(storeOn(filename, secret("a different secret")))
        )
      )
      expect(Exit.isFailure(wrong)).toBe(true)
      expect(String(wrong)).not.toContain(token)
    }))

  it.scoped("without the cipher service the store keeps its old behaviour", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const layer = SqlAccountStore.layer.pipe(
        Layer.provideMerge(SqlDatabase.layer({ _tag: "Sqlite", filename: path.join(dir, "plain.db") }))
      )
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const store = yield* AccountStore
        const orgId = "00000000-0000-4000-8000-0000000000aa"
        yield* sql`INSERT INTO organizations (id, name, plan, subscription_status, trial_ends_at, created_at)
          VALUES (${orgId}, 'o', 'scale', 'active', NULL, 0)`
        const inserted = yield* store.insert(
          newAccount(orgId as never, { credentials: Option.some(Redacted.make("plain")) })
        )
        const raw = yield* sql<
          { credentials: string }
        >`SELECT credentials FROM social_accounts WHERE id = ${inserted.id}`
        expect(raw[0]!.credentials).toBe("plain")
      }).pipe(Effect.provide(layer))
    }))
})
