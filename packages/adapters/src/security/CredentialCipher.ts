/**
 * Encryption at rest for platform credentials: AES-256-GCM with a random 12-byte IV per value.
 *
 * Stored form (versioned): `hc1.` + base64url(iv) + `.` + base64url(ciphertext) + `.` + base64url(tag),
 * the organization-independent associated data being the version label. A value without the prefix is
 * a row written before encryption existed, and is read as it is (it is sealed on its next write).
 *
 * The key: from `HERALD_SECRET` when set (the same on every process sharing a database), otherwise a
 * random 32-byte key generated once and kept in `{dataDir}/secret.key` with 0600 permissions. The
 * working keys are derived with HKDF-SHA256 from that root, one per purpose: credentials, and the
 * signing key of OAuth connect states. The key is read on first use, so a process that never touches
 * credentials creates no key file.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import type { DatabaseConfig } from "../sql/SqlDatabase.js"

export const prefix = "hc1."

export class CipherError extends Data.TaggedError("CipherError")<{
  readonly reason: "undecryptable" | "malformed" | "key_unavailable"
  readonly detail: string
}> {
  override get message(): string {
    return `credentials cipher: ${this.reason}: ${this.detail}`
  }
}

export class CredentialCipher extends Context.Tag("@herald/adapters/CredentialCipher")<CredentialCipher, {
  readonly seal: (plaintext: string) => Effect.Effect<string, CipherError>
  /** Decrypts a sealed value; a value without the version prefix is returned unchanged. */
  readonly open: (stored: string) => Effect.Effect<string, CipherError>
  /** A key for another purpose (e.g. signing connect states), derived from the same root. */
  readonly deriveSecret: (purpose: string) => Effect.Effect<Redacted.Redacted<string>, CipherError>
}>() {}

export interface KeySource {
  /** `HERALD_SECRET`: any string; it is stretched by HKDF, but give it at least 32 random characters. */
  readonly secret?: Redacted.Redacted<string> | undefined
  /** Where the generated key lives when no secret is given. */
  readonly dataDir: string
}

export const keyFileName = "secret.key"

/**
 * The root key: the secret's bytes, or the data dir's key file, created (exclusively, 0600) when
 * missing. Two processes racing to create it both end up reading the winner's key.
 */
export const loadRootKey = (source: KeySource): Effect.Effect<Uint8Array, CipherError> =>
  Effect.try({
    try: () => {
      if (source.secret !== undefined && Redacted.value(source.secret) !== "") {
        return new Uint8Array(Buffer.from(Redacted.value(source.secret), "utf8"))
      }
      const file = path.join(source.dataDir, keyFileName)
      // Owner-only, as everything Herald writes under the data dir.
      fs.mkdirSync(source.dataDir, { recursive: true, mode: 0o700 })
      try {
        fs.writeFileSync(file, crypto.randomBytes(32).toString("hex") + "\n", { mode: 0o600, flag: "wx" })
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      }
      const hex = fs.readFileSync(file, "utf8").trim()
      if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`${file} does not hold a 32-byte hex key`)
      return new Uint8Array(Buffer.from(hex, "hex"))
    },
    catch: (error) =>
      new CipherError({
        reason: "key_unavailable",
        detail: error instanceof Error ? error.message : "the key could not be read"
      })
  })

const derive = (root: Uint8Array, purpose: string): Buffer =>
  Buffer.from(crypto.hkdfSync("sha256", root, "herald", `herald/${purpose}`, 32))

const aad = Buffer.from("herald-credentials-v1", "utf8")

/** Seals with a given 32-byte key (exported for tests of the format). */
export const sealWith = (key: Uint8Array, plaintext: string): string => {
  const iv = crypto.randomBytes(12)
  const cipher = crypto.createCipheriv("aes-256-gcm", key, iv)
  cipher.setAAD(aad)
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
  const tag = cipher.getAuthTag()
  return `${prefix}${iv.toString("base64url")}.${body.toString("base64url")}.${tag.toString("base64url")}`
}

export const openWith = (key: Uint8Array, stored: string): Effect.Effect<string, CipherError> => {
  if (!stored.startsWith(prefix)) return Effect.succeed(stored)
  const parts = stored.slice(prefix.length).split(".")
  if (parts.length !== 3) return Effect.fail(new CipherError({ reason: "malformed", detail: "not iv.body.tag" }))
  return Effect.try({
    try: () => {
      const [iv, body, tag] = parts.map((p) => Buffer.from(p, "base64url")) as [Buffer, Buffer, Buffer]
      if (iv.length !== 12 || tag.length !== 16) throw new Error("bad iv or tag length")
      const decipher = crypto.createDecipheriv("aes-256-gcm", key, iv)
      decipher.setAAD(aad)
      decipher.setAuthTag(tag)
      return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8")
    },
    // GCM's message on a wrong key says nothing secret, but the value itself is never echoed.
    catch: () =>
      new CipherError({
        reason: "undecryptable",
        detail:
          "stored credentials do not decrypt with this key (was HERALD_SECRET or the data dir's secret.key changed?)"
      })
  })
}

/** How many opened credentials a process keeps (oldest forgotten first). */
const openedCacheSize = 1024

export const make = (source: KeySource): Effect.Effect<CredentialCipher["Type"]> =>
  Effect.map(Effect.cached(loadRootKey(source)), (root) => {
    // Each purpose's key is derived once: HKDF per request showed in the create path's profile.
    const derived = new Map<string, Buffer>()
    const keyFor = (purpose: string) =>
      Effect.map(root, (r) => {
        let key = derived.get(purpose)
        if (key === undefined) {
          key = derive(r, purpose)
          derived.set(purpose, key)
        }
        return key
      })
    const credentialKey = keyFor("credentials/v1")
    // Every account read opens its credentials (GET /accounts opens each listed account's): the
    // latest openings are kept, keyed by the sealed value, so a hot list costs no AES per request.
    const opened = new Map<string, string>()
    const remember = (stored: string, plaintext: string) => {
      if (opened.size >= openedCacheSize) opened.delete(opened.keys().next().value!)
      opened.set(stored, plaintext)
      return plaintext
    }
    return CredentialCipher.of({
      seal: (plaintext) => Effect.map(credentialKey, (key) => sealWith(key, plaintext)),
      open: (stored) => {
        if (!stored.startsWith(prefix)) return Effect.succeed(stored)
        const known = opened.get(stored)
        return known !== undefined
          ? Effect.succeed(known)
          : Effect.flatMap(
            credentialKey,
            (key) => Effect.map(openWith(key, stored), (plain) => remember(stored, plain))
          )
      },
      deriveSecret: (purpose) => Effect.map(keyFor(purpose), (key) => Redacted.make(key.toString("hex")))
    })
  })

export const layer = (source: KeySource): Layer.Layer<CredentialCipher> => Layer.effect(CredentialCipher, make(source))

/** `HERALD_SECRET` from the environment, else the key file in `dataDir`. */
export const layerFromEnv = (dataDir: string, env: NodeJS.ProcessEnv = process.env): Layer.Layer<CredentialCipher> => {
  const secret = env.HERALD_SECRET
  return layer({ dataDir, ...(secret === undefined || secret === "" ? {} : { secret: Redacted.make(secret) }) })
}

/**
 * Where the generated key lives for a store: beside the SQLite file, or `.herald` for Postgres (set
 * HERALD_SECRET there, the same on every process).
 */
export const keyDirFor = (database: DatabaseConfig): string =>
  database._tag === "Sqlite" && database.filename !== ":memory:" ? path.dirname(database.filename) : ".herald"
