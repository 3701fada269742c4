/**
 * The served OpenAPI document describes what the server really sends: real response bodies of
 * several statuses are checked against the document's response schemas. Also /docs is served
 * without any CDN.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { insertAccounts } from "../support/AccountFixtures.js"
import * as HeraldServer from "../support/HeraldServer.js"
import { validate } from "../support/JsonSchema.js"

type Json = Record<string, unknown>

let server: HeraldServer.HeraldServer
let doc: Json
let accountId: number
let writeOnlyKey: string

beforeAll(async () => {
  server = await HeraldServer.start()
  const res = await server.request("GET", "/api/v1/openapi.json", { key: null })
  expect(res.status).toBe(200)
  doc = res.json as Json
  const [account] = await server.withStore(insertAccounts(server.orgId, [{ platform: "x", name: "documented" }]))
  accountId = account.id
  writeOnlyKey = await server.createKey({ scopes: ["write"] })
}, 120_000)
afterAll(async () => {
  await server?.stop()
})

const responseSchema = (path: string, method: string, status: number, contentType = "application/json"): unknown => {
  const paths = doc.paths as Record<string, Record<string, { responses: Record<string, Json> }>>
  const response = paths[path]?.[method]?.responses[String(status)]
  expect(response, `${method.toUpperCase()} ${path} documents ${status}`).toBeDefined()
  const content = response!.content as Record<string, { schema: unknown }> | undefined
  expect(content?.[contentType], `${method.toUpperCase()} ${path} ${status} has ${contentType}`).toBeDefined()
  return content![contentType].schema
}

const conforms = async (
  docPath: string,
  realPath: string,
  expectedStatus: number,
  options: HeraldServer.RequestOptions = {}
) => {
  const res = await server.request("GET", realPath, options)
  expect(res.status, `${realPath}: ${res.text}`).toBe(expectedStatus)
  const errors = validate(doc, responseSchema(docPath, "get", expectedStatus), res.json)
  expect(errors, `${realPath} ${expectedStatus} against the document`).toEqual([])
  return res
}

describe("OpenAPI document", () => {
  it("is OpenAPI 3.1 with the API's paths and bearer security", () => {
    expect(doc.openapi).toBe("3.1.0")
    expect(Object.keys(doc.paths as Json).sort()).toEqual(expect.arrayContaining([
      "/api/v1/me",
      "/api/v1/accounts",
      "/api/v1/accounts/{id}",
      "/api/v1/accounts/{id}/health",
      "/api/v1/queue",
      "/api/v1/posts/bulk",
      "/api/v1/posts/bulk-schedule",
      "/health"
    ]))
    const schemes = (doc.components as { securitySchemes: Json }).securitySchemes
    expect(schemes.bearer).toMatchObject({ type: "http", scheme: "bearer" })
    expect(JSON.stringify(doc)).not.toContain("HttpApiDecodeError")
  })

  it("documents the auth layer's responses and the common errors on every authenticated operation", () => {
    const paths = doc.paths as Record<string, Record<string, { responses: Record<string, Json> }>>
    for (const [path, ops] of Object.entries(paths)) {
      if (!path.startsWith("/api/v1/") || path === "/api/v1/openapi.json") continue
      for (const op of Object.values(ops)) {
        expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["400", "401", "402", "403", "429", "500"]))
        expect(Object.keys(op.responses["401"].content as Json).sort()).toEqual(["application/json", "text/plain"])
      }
    }
  })

  it("matches real success bodies", async () => {
    await conforms("/api/v1/me", "/api/v1/me", 200)
    await conforms("/api/v1/accounts", "/api/v1/accounts", 200)
    await conforms("/api/v1/accounts/{id}", `/api/v1/accounts/${accountId}`, 200)
    await conforms("/api/v1/accounts/{id}/health", `/api/v1/accounts/${accountId}/health`, 200)
    const health = await server.request("GET", "/health", { key: null })
    expect(validate(doc, responseSchema("/health", "get", 200), health.json)).toEqual([])
  })

  it("matches real error bodies", async () => {
    await conforms("/api/v1/accounts/{id}", "/api/v1/accounts/abc", 400)
    await conforms("/api/v1/accounts/{id}", "/api/v1/accounts/99999", 404)
    await conforms("/api/v1/accounts/{id}/health", "/api/v1/accounts/99999/health", 404)
    await conforms("/api/v1/me", "/api/v1/me", 403, { key: writeOnlyKey })
    await conforms("/api/v1/me", "/api/v1/me", 401, { key: "pe_live_00000000000000000000000000000000" })
    const plain = await server.request("GET", "/api/v1/me", { key: null })
    expect(plain.status).toBe(401)
    expect(validate(doc, responseSchema("/api/v1/me", "get", 401, "text/plain"), plain.text)).toEqual([])
  })

  it("is checked by a validator that does reject wrong bodies", async () => {
    const res = await server.request("GET", "/api/v1/me")
    const body = res.json as { data: Json; meta: Json }
    const schema = responseSchema("/api/v1/me", "get", 200)
    expect(validate(doc, schema, { ...body, data: { ...body.data, key: null } })).not.toEqual([])
    expect(validate(doc, schema, { ...body, meta: {} })).not.toEqual([])
    expect(validate(doc, schema, { ...body, extra: 1 })).not.toEqual([])
    const errorSchema = responseSchema("/api/v1/accounts/{id}", "get", 404)
    expect(validate(doc, errorSchema, { data: null, error: { code: "not_found", message: "x" }, meta: {} }))
      .not.toEqual([])
  })

  it("serves the interactive reference at /docs with no CDN", async () => {
    const res = await server.request("GET", "/docs", { key: null })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/html/)
    expect(res.text).toContain("/api/v1/me")
    expect(res.text).not.toMatch(/<script[^>]+src=["']https?:/)
  })
})
