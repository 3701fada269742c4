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
      "/health",
      "/health/live",
      "/health/ready"
    ]))
    const schemes = (doc.components as { securitySchemes: Json }).securitySchemes
    expect(schemes.bearer).toMatchObject({ type: "http", scheme: "bearer" })
    expect(JSON.stringify(doc)).not.toContain("HttpApiDecodeError")
  })

  it("documents the auth layer's responses and the common errors on every authenticated operation", () => {
    const paths = doc.paths as Record<string, Record<string, { responses: Record<string, Json> }>>
    for (const [path, ops] of Object.entries(paths)) {
      if (!path.startsWith("/api/v1/") || path === "/api/v1/openapi.json") continue
      // The device login pair needs no key; the connect bridge answers api_key_required (JSON) instead.
      if (path.startsWith("/api/v1/auth/")) continue
      for (const op of Object.values(ops)) {
        expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["400", "401", "402", "403", "429", "500"]))
        expect(Object.keys(op.responses["401"].content as Json).sort()).toEqual(["application/json", "text/plain"])
      }
    }
  })

  it("documents the device login pair without security, and the connect bridge's 401 as JSON only", () => {
    const paths = doc.paths as Record<string, Record<string, { security?: unknown; responses: Record<string, Json> }>>
    for (const path of ["/api/v1/auth/device", "/api/v1/auth/device/token"]) {
      const op = paths[path]?.post
      expect(op, path).toBeDefined()
      expect(op!.security ?? []).toEqual([])
      expect(Object.keys(op!.responses)).toEqual(expect.arrayContaining(["200", "400", "429", "500"]))
      expect(op!.responses["401"]).toBeUndefined()
    }
    const bridge: ReadonlyArray<[string, string]> = [
      ["/api/v1/auth/social-connect/start", "post"],
      ["/api/v1/auth/social-connect/poll/{session_id}", "get"],
      ["/api/v1/auth/social-connect/bluesky", "post"],
      ["/api/v1/auth/social-connect/telegram", "post"],
      ["/api/v1/auth/social-connect/discord", "post"]
    ]
    for (const [path, method] of bridge) {
      const op = paths[path]?.[method]
      expect(op, `${method} ${path}`).toBeDefined()
      expect(Object.keys(op!.responses)).toEqual(
        expect.arrayContaining(["200", "400", "401", "402", "403", "404", "429", "500"])
      )
      expect(Object.keys(op!.responses["401"].content as Json)).toEqual(["application/json"])
      expect(JSON.stringify(op!.responses["401"])).toContain("api_key_required")
    }
    // The verification page is the dashboard's (an HTML page, not part of the API).
    expect(paths["/device"]).toBeUndefined()
  })

  it("matches real success bodies", async () => {
    await conforms("/api/v1/me", "/api/v1/me", 200)
    await conforms("/api/v1/accounts", "/api/v1/accounts", 200)
    await conforms("/api/v1/accounts/{id}", `/api/v1/accounts/${accountId}`, 200)
    await conforms("/api/v1/accounts/{id}/health", `/api/v1/accounts/${accountId}/health`, 200)
    const health = await server.request("GET", "/health", { key: null })
    expect(validate(doc, responseSchema("/health", "get", 200), health.json)).toEqual([])
    for (const probe of ["/health/live", "/health/ready"]) {
      const res = await server.request("GET", probe, { key: null })
      expect(res.status).toBe(200)
      expect(validate(doc, responseSchema(probe, "get", 200), res.json)).toEqual([])
    }
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

  it("describes the AI routes: request fields with their enums and bounds, 200/201 bodies, 402 insufficient_credits", () => {
    const paths = doc.paths as Record<
      string,
      Record<string, { requestBody?: Json; responses: Record<string, Json>; summary?: string }>
    >
    const requestOf = (path: string) => {
      const op = paths[path]?.["post"]
      expect(op, `POST ${path} is documented`).toBeDefined()
      return (op!.requestBody as {
        content: Record<
          string,
          { schema: { required: Array<string>; properties: Record<string, { enum?: Array<string> } & Json> } }
        >
      })
        .content["application/json"]!.schema
    }
    const caption = requestOf("/api/v1/ai/generate-caption")
    expect(caption.required).toEqual(["topic"])
    expect(caption.properties.topic).toMatchObject({ type: "string", maxLength: 1000 })
    expect(caption.properties.tone.enum).toEqual([
      "professional",
      "casual",
      "witty",
      "enthusiastic",
      "urgent",
      "inspirational"
    ])
    expect(caption.properties.length.enum).toEqual(["short", "medium", "long"])
    expect(JSON.stringify(caption.properties.count)).toContain("\"maximum\":5")
    expect(Object.keys(caption.properties)).toEqual(
      expect.arrayContaining(["platform", "include_hashtags", "include_emojis", "count"])
    )
    const image = requestOf("/api/v1/ai/generate-image")
    expect(image.required).toEqual(["prompt"])
    expect(image.properties.prompt).toMatchObject({ type: "string", maxLength: 2000 })
    expect(image.properties.aspect_ratio.enum).toEqual(["1:1", "16:9", "9:16", "4:3", "3:4", "4:5", "5:4"])
    expect(image.properties.model.enum).toEqual(["standard", "hd"])
    const captionOp = paths["/api/v1/ai/generate-caption"]!["post"]!
    const imageOp = paths["/api/v1/ai/generate-image"]!["post"]!
    expect(Object.keys(captionOp.responses)).toEqual(expect.arrayContaining(["200", "400", "402", "403", "500"]))
    expect(Object.keys(imageOp.responses)).toEqual(expect.arrayContaining(["201", "400", "402", "403", "500"]))
    expect(captionOp.summary).toContain("insufficient_credits")
    expect(imageOp.summary).toContain("prompt_rejected")
    const schemas = (doc.components as { schemas: Record<string, { properties: Json }> }).schemas
    expect(Object.keys(schemas["GeneratedCaptions"]!.properties)).toEqual(
      expect.arrayContaining(["captions", "variants", "provider", "sandbox", "credits_charged", "credits"])
    )
    expect(Object.keys(schemas["GeneratedImage"]!.properties)).toEqual(
      expect.arrayContaining(["id", "media_id", "status", "prompt", "aspect_ratio", "model", "credits_charged"])
    )
  })

  it("describes GET /platform-rules and GET /analytics/summary, with their real bodies", async () => {
    const paths = doc.paths as Record<string, Record<string, { parameters?: ReadonlyArray<{ name: string }> }>>
    expect(paths["/api/v1/platform-rules"]?.get).toBeDefined()
    expect(paths["/api/v1/analytics/summary"]?.get?.parameters?.map((p) => p.name).sort()).toEqual([
      "from",
      "period",
      "to"
    ])
    await conforms("/api/v1/platform-rules", "/api/v1/platform-rules", 200)
    await conforms("/api/v1/analytics/summary", "/api/v1/analytics/summary", 200)
    await conforms(
      "/api/v1/analytics/summary",
      "/api/v1/analytics/summary?period=custom&from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z",
      200
    )
    await conforms("/api/v1/analytics/summary", "/api/v1/analytics/summary?period=decade", 400)
    await conforms("/api/v1/analytics/summary", "/api/v1/analytics/summary?period=custom", 400)
    await conforms("/api/v1/platform-rules", "/api/v1/platform-rules", 403, { key: writeOnlyKey })
    await conforms("/api/v1/analytics/summary", "/api/v1/analytics/summary", 403, { key: writeOnlyKey })
  })

  it("serves the interactive reference at /docs with no CDN", async () => {
    const res = await server.request("GET", "/docs", { key: null })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/html/)
    expect(res.text).toContain("/api/v1/me")
    expect(res.text).not.toMatch(/<script[^>]+src=["']https?:/)
  })
})

describe("OpenAPI document: approvals and campaigns", () => {
  type Op = { readonly requestBody?: Json; readonly responses: Record<string, Json> }
  const op = (path: string, method: string): Op => {
    const found = (doc.paths as Record<string, Record<string, Op>>)[path]?.[method]
    expect(found, `${method.toUpperCase()} ${path} is documented`).toBeDefined()
    return found!
  }
  /** The request body's schema, with a top-level $ref resolved. */
  const requestSchema = (o: Op): Json => {
    const schema = ((o.requestBody?.content as Record<string, { schema: Json }>)["application/json"]!).schema
    const ref = schema["$ref"]
    if (typeof ref !== "string") return schema
    return ref.split("/").slice(1).reduce<Json>((node, part) => node[part] as Json, doc)
  }

  it("documents approve and request-changes with their bodies (note required on request-changes) and 400/404 (a post that is not pending is 400 invalid_post_status, never 409)", () => {
    const approve = op("/api/v1/posts/{id}/approve", "post")
    const changes = op("/api/v1/posts/{id}/request-changes", "post")
    for (const o of [approve, changes]) {
      expect(Object.keys(o.responses)).toEqual(expect.arrayContaining(["200", "400", "404"]))
      expect(Object.keys(o.responses)).not.toContain("409")
    }
    expect(Object.keys(requestSchema(approve)["properties"] as Json)).toEqual(["note"])
    expect(requestSchema(approve)["required"] ?? []).toEqual([])
    expect(requestSchema(changes)["required"]).toEqual(["note"])
  })

  it("documents the campaign routes, the create body (name required) and the list parameters", () => {
    for (
      const [path, method, status] of [
        ["/api/v1/campaigns", "get", "200"],
        ["/api/v1/campaigns", "post", "201"],
        ["/api/v1/campaigns/{id}", "get", "200"],
        ["/api/v1/campaigns/{id}", "patch", "200"],
        ["/api/v1/campaigns/{id}", "delete", "200"]
      ] as const
    ) {
      expect(Object.keys(op(path, method).responses), `${method} ${path}`).toEqual(expect.arrayContaining([status]))
    }
    const create = requestSchema(op("/api/v1/campaigns", "post"))
    expect(create["required"]).toEqual(["name"])
    expect(Object.keys(create["properties"] as Json).sort()).toEqual(["color", "description", "name", "status"])
    const params = (op("/api/v1/campaigns", "get") as Op & { parameters: ReadonlyArray<{ name: string }> }).parameters
    expect(params.map((p) => p.name).sort()).toEqual(["limit", "offset", "status"])
  })

  it("matches a real campaign list and a real 400 invalid_id", async () => {
    await conforms("/api/v1/campaigns", "/api/v1/campaigns", 200)
    await conforms("/api/v1/campaigns/{id}", "/api/v1/campaigns/abc", 400)
  })
})
