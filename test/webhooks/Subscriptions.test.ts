/**
 * Subscriptions through the use cases on SQLite: the save-time SSRF refusals without the operator
 * switch (scheme, literal private addresses in every spelling, a host name resolving to loopback),
 * event validation, the limit of 25, update and delete.
 */
import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as AddressGuard from "@herald/adapters/net/AddressGuard"
import { eventTypes } from "@herald/core/webhooks/Event"
import * as Webhooks from "@herald/core/webhooks/Webhooks"
import { WebhookStore } from "@herald/core/webhooks/WebhookStore"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestDatabases from "../../packages/adapters/test/support/TestDatabases.js"
import { emit, engine, engineSealed, givenOrganization } from "./WebhookFixtures.js"

const resolve: AddressGuard.Resolver = (hostname) => {
  switch (hostname) {
    case "loopback.example.com":
      return Promise.resolve([{ address: "127.0.0.1", family: 4 }])
    case "mixed.example.com":
      return Promise.resolve([{ address: "93.184.216.34", family: 4 }, { address: "10.1.2.3", family: 4 }])
    case "hooks.example.com":
      return Promise.resolve([{ address: "93.184.216.34", family: 4 }])
    default:
      return Promise.reject(new Error("ENOTFOUND"))
  }
}

/** No operator switch: what production does. */
const strict = engine(TestDatabases.sqlite, { allowPrivate: false, resolve })

const errorOf = <A, R>(self: Effect.Effect<A, unknown, R>) =>
  Effect.map(
    Effect.flip(self),
    (e) => e as { readonly code: string; readonly message: string; readonly details?: Record<string, unknown> }
  )

describe("webhook subscriptions", () => {
  it.effect("refuses private, local and non-HTTPS targets at creation, in every spelling", () =>
    Effect.gen(function*() {
      const org = yield* givenOrganization
      const refused = [
        "http://hooks.example.com/h",
        "ftp://hooks.example.com/h",
        "https://127.0.0.1/h",
        "https://10.0.0.7/h",
        "https://192.168.1.1/h",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/h",
        "https://[::ffff:127.0.0.1]/h",
        "https://[::ffff:7f00:1]/h",
        "https://2130706433/h",
        "https://0177.0.0.1/h",
        "https://0x7f.1/h",
        "https://127.1/h",
        "https://loopback.example.com/h",
        "https://mixed.example.com/h",
        "not a url"
      ]
      for (const url of refused) {
        const error = yield* errorOf(Webhooks.create(org.id, { url, events: ["post.published"] }))
        expect([url, error.code]).toEqual([url, "validation_error"])
        expect(error.details?.["validation_errors"]).toEqual([{ path: "url", message: expect.any(String) }])
      }
      expect(yield* (yield* WebhookStore).list(org.id)).toEqual([])
      // Public targets pass; a host that does not resolve now is accepted (every send checks again).
      const ok = yield* Webhooks.create(org.id, { url: "https://hooks.example.com/h", events: ["post.published"] })
      expect(ok.record.subscription.url).toBe("https://hooks.example.com/h")
      yield* Webhooks.create(org.id, { url: "https://not-yet.example.net/h", events: ["post.published"] })
      // PATCH checks the URL the same way.
      const patched = yield* errorOf(
        Webhooks.update(org.id, ok.record.subscription.id, { url: "https://[::ffff:127.0.0.1]/" })
      )
      expect(patched.code).toBe("validation_error")
    }).pipe(Effect.provide(strict)))

  it.effect("with the operator switch, loopback and plain http are allowed, cloud metadata is not", () =>
    Effect.gen(function*() {
      const org = yield* givenOrganization
      yield* Webhooks.create(org.id, { url: "http://127.0.0.1:9/h", events: ["post.published"] })
      const metadata = yield* errorOf(
        Webhooks.create(org.id, { url: "http://169.254.169.254/", events: ["post.published"] })
      )
      expect(metadata.code).toBe("validation_error")
    }).pipe(Effect.provide(engine())))

  it.effect("events are explicit and known: invalid_event_type lists the valid ones, no wildcard", () =>
    Effect.gen(function*() {
      const org = yield* givenOrganization
      const url = "https://hooks.example.com/h"
      const unknown = yield* errorOf(Webhooks.create(org.id, { url, events: ["post.published", "post.exploded"] }))
      expect(unknown.code).toBe("invalid_event_type")
      expect(unknown.details).toEqual({ valid_events: [...eventTypes], invalid_events: ["post.exploded"] })
      const wildcard = yield* errorOf(Webhooks.create(org.id, { url, events: ["*"] }))
      expect([wildcard.code, wildcard.message]).toEqual(["invalid_event_type", expect.stringContaining("no wildcard")])
      expect((yield* errorOf(Webhooks.create(org.id, { url, events: ["post.*"] }))).code).toBe("invalid_event_type")
      expect((yield* errorOf(Webhooks.create(org.id, { url, events: [] }))).code).toBe("validation_error")
      expect((yield* errorOf(Webhooks.create(org.id, { url }))).code).toBe("validation_error")
      expect((yield* errorOf(Webhooks.create(org.id, { url, events: "post.published" }))).code).toBe("validation_error")
      const deduped = yield* Webhooks.create(org.id, { url, events: ["post.failed", "post.published", "post.failed"] })
      expect(deduped.record.subscription.events).toEqual(["post.failed", "post.published"])
    }).pipe(Effect.provide(strict)))

  it.effect("at most 25 per organization: the 26th is limit_reached", () =>
    Effect.gen(function*() {
      const org = yield* givenOrganization
      const other = yield* givenOrganization
      const body = { url: "https://hooks.example.com/h", events: ["post.published"] }
      for (let i = 0; i < 25; i++) yield* Webhooks.create(org.id, body)
      const error = yield* errorOf(Webhooks.create(org.id, body))
      expect([error.code, error.details]).toEqual(["limit_reached", { limit: 25 }])
      yield* Webhooks.create(other.id, body)
      // Deleting one makes room.
      const [first] = yield* Webhooks.list(org.id)
      yield* Webhooks.remove(org.id, first!.subscription.id)
      yield* Webhooks.create(org.id, body)
    }).pipe(Effect.provide(strict)))

  it.effect("secrets are whsec_ + 64 characters, unique, and stored sealed when a cipher is provided", () =>
    Effect.gen(function*() {
      const org = yield* givenOrganization
      const body = { url: "https://hooks.example.com/h", events: ["post.published"] }
      const a = yield* Webhooks.create(org.id, body)
      const b = yield* Webhooks.create(org.id, body)
      expect(a.secret).toMatch(/^whsec_[A-Za-z0-9+/]{64}$/)
      expect(a.secret).not.toBe(b.secret)
      const stored = yield* Webhooks.get(org.id, a.record.subscription.id)
      expect(Redacted.value(stored.subscription.secret)).toBe(a.secret)
      // Redacted: the secret never shows in a printed record.
      expect(String(stored.subscription.secret)).not.toContain(a.secret.slice(6))
      // At rest it is sealed, not plain.
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<
        { secret: string }
      >`SELECT secret FROM webhook_subscriptions WHERE id = ${a.record.subscription.id}`
      expect(rows[0]!.secret.startsWith("hc1.")).toBe(true)
      expect(rows[0]!.secret).not.toContain(a.secret.slice(6))
    }).pipe(Effect.provide(engineSealed({ allowPrivate: false, resolve }))))

  it.effect("update, not found across organizations, and delete with its history", () =>
    Effect.gen(function*() {
      const org = yield* givenOrganization
      const other = yield* givenOrganization
      const { record } = yield* Webhooks.create(org.id, {
        url: "https://hooks.example.com/h",
        events: ["post.published"],
        name: "ops"
      })
      const id = record.subscription.id
      expect((yield* errorOf(Webhooks.get(other.id, id))).code).toBe("not_found")
      expect((yield* errorOf(Webhooks.get(org.id, "not-a-uuid"))).code).toBe("not_found")
      expect((yield* errorOf(Webhooks.update(other.id, id, { is_active: false }))).code).toBe("not_found")
      const updated = yield* Webhooks.update(org.id, id, { events: ["post.failed"], name: null, is_active: false })
      expect([updated.subscription.events, updated.subscription.name, updated.subscription.isActive]).toEqual([
        ["post.failed"],
        Option.none(),
        false
      ])
      expect((yield* errorOf(Webhooks.update(org.id, id, { events: ["nope"] }))).code).toBe("invalid_event_type")
      expect((yield* errorOf(Webhooks.update(org.id, id, { is_active: "yes" }))).code).toBe("validation_error")
      yield* Webhooks.update(org.id, id, { is_active: true })
      yield* emit(org.id, "post.failed")
      expect(yield* (yield* WebhookStore).listDeliveries(id)).toHaveLength(1)
      yield* Webhooks.remove(org.id, id)
      expect(yield* (yield* WebhookStore).listDeliveries(id)).toEqual([])
      expect((yield* errorOf(Webhooks.remove(org.id, id))).code).toBe("not_found")
    }).pipe(Effect.provide(strict)))
})
