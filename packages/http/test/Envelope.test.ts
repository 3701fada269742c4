/**
 * `Envelope.respond` answers the success envelope as JSON text: the same status, headers
 * (content-type, content-length in UTF-8 bytes) and bytes as `HttpServerResponse.unsafeJson` gave.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import * as Envelope from "../src/Envelope.js"

const Data = Schema.Struct({ name: Schema.String, count: Schema.Number })

const bytesOf = (response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.toWeb(response).arrayBuffer().then((buffer) => new Uint8Array(buffer))

describe("Envelope.respond", () => {
  it.each([["ASCII", "hello"], ["non-ASCII", "héllo 👋 ünïcödé \u2028"]])(
    "gives the envelope's status, headers and bytes as unsafeJson did (%s)",
    async (_label, name) => {
      const meta: Envelope.Meta = {
        request_id: "0b0e2c3a-8f7e-4a51-9d7b-3f0d2e1c4b5a",
        timestamp: "2026-11-24T12:00:00.000Z"
      }
      const data = { name, count: 2 }
      const response = Effect.runSync(
        Envelope.respond(Data, data, 201).pipe(Effect.locally(Envelope.currentMeta, meta))
      )
      const before = HttpServerResponse.unsafeJson({ data, error: null, meta }, { status: 201 })
      expect(response.status).toBe(201)
      expect(response.headers).toEqual(before.headers)
      expect(Object.keys(response.headers)).toEqual(Object.keys(before.headers))
      expect(await bytesOf(response)).toEqual(await bytesOf(before))
    }
  )
})

describe("Envelope.respondJson", () => {
  it.each([["ASCII", "hello"], ["non-ASCII", "héllo 👋 ünïcödé \u2028"]])(
    "gives what respond gives for the parsed data (%s)",
    async (_label, name) => {
      const meta: Envelope.Meta = {
        request_id: "0b0e2c3a-8f7e-4a51-9d7b-3f0d2e1c4b5a",
        timestamp: "2026-11-24T12:00:00.000Z"
      }
      const data = { name, count: 2 }
      const run = <A>(effect: Effect.Effect<A>) =>
        Effect.runSync(effect.pipe(Effect.locally(Envelope.currentMeta, meta)))
      const response = run(Envelope.respondJson(JSON.stringify(data), 201))
      const before = run(Envelope.respond(Data, data, 201))
      expect(response.status).toBe(201)
      expect(response.headers).toEqual(before.headers)
      expect(Object.keys(response.headers)).toEqual(Object.keys(before.headers))
      expect(await bytesOf(response)).toEqual(await bytesOf(before))
    }
  )
})
