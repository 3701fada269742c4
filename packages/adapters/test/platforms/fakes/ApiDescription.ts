/**
 * A platform's published OpenAPI description (vendored under `../specs/`, see its README) as a fake's
 * request check: every request a fake receives is matched to an operation of the description by method
 * and path, and its path and query parameters, required headers, content type and body (JSON, form or
 * multipart fields: types, enums, lengths, required fields, no unknown ones where the description
 * closes the object) are validated with Ajv; the fake's own answers are validated against the
 * operation's response schemas. A request the description does not allow is refused by `FakeServer`
 * and fails the test.
 *
 * OpenAPI 3.0 files are normalised in memory for a JSON Schema validator: `nullable` becomes a `null`
 * type (or an `anyOf` with `null` where there is no `type`), and draft-04 boolean `exclusiveMinimum`/
 * `exclusiveMaximum` become numbers. OpenAPI 3.1 files are JSON Schema 2020-12 already. In both, a
 * `oneOf` whose branches are all enumerations is read as `anyOf`: generated descriptions (Pinterest's
 * `metric_types`) list overlapping enumerations there, which a strict `oneOf` would refuse for every
 * value the two share.
 */
import { Ajv, type ValidateFunction } from "ajv"
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import { readFileSync } from "node:fs"
import type * as FakeServer from "./FakeServer.js"

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
type JsonObject = { readonly [key: string]: Json }

const isObject = (u: unknown): u is Record<string, Json> => typeof u === "object" && u !== null && !Array.isArray(u)

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv | Ajv2020) => void

/** Reads a vendored description from `test/platforms/specs/`. */
export const read = (file: string): Record<string, Json> =>
  JSON.parse(readFileSync(new URL(`../specs/${file}`, import.meta.url), "utf8")) as Record<string, Json>

const isEnumeration = (u: Json): boolean => isObject(u) && Array.isArray(u["enum"]) && u["$ref"] === undefined

/** A `oneOf` of enumerations as `anyOf` (see above), everywhere in a document. */
export const enumerationUnions = (node: Json): Json => {
  if (Array.isArray(node)) return node.map(enumerationUnions)
  if (!isObject(node)) return node
  const out: Record<string, Json> = {}
  for (const [key, value] of Object.entries(node)) out[key] = enumerationUnions(value)
  const oneOf = out["oneOf"]
  if (Array.isArray(oneOf) && oneOf.length > 1 && oneOf.every(isEnumeration)) {
    delete out["oneOf"]
    out["anyOf"] = oneOf
  }
  return out
}

/** OpenAPI 3.0 schema dialect → JSON Schema: `nullable`, boolean exclusive bounds. */
export const normalise30 = (node: Json): Json => {
  if (Array.isArray(node)) return node.map(normalise30)
  if (!isObject(node)) return node
  const out: Record<string, Json> = {}
  for (const [key, value] of Object.entries(node)) out[key] = normalise30(value)
  if (out["exclusiveMinimum"] === true && typeof out["minimum"] === "number") {
    out["exclusiveMinimum"] = out["minimum"]
    delete out["minimum"]
  } else if (typeof out["exclusiveMinimum"] === "boolean") delete out["exclusiveMinimum"]
  if (out["exclusiveMaximum"] === true && typeof out["maximum"] === "number") {
    out["exclusiveMaximum"] = out["maximum"]
    delete out["maximum"]
  } else if (typeof out["exclusiveMaximum"] === "boolean") delete out["exclusiveMaximum"]
  if (out["nullable"] === true) {
    delete out["nullable"]
    const type = out["type"]
    if (typeof type === "string" && out["$ref"] === undefined) {
      out["type"] = [type, "null"]
      if (Array.isArray(out["enum"])) out["enum"] = [...out["enum"], null]
      return out
    }
    return { anyOf: [out, { type: "null" }] }
  }
  if (out["nullable"] === false) delete out["nullable"]
  return out
}

const pointer = (doc: Json, ref: string): Json => {
  let node: Json = doc
  for (const raw of ref.replace(/^#?\//, "").split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~")
    node = Array.isArray(node)
      ? (node as ReadonlyArray<Json>)[Number(key)] ?? null
      : isObject(node)
      ? node[key] ?? null
      : null
  }
  return node
}

/** Follows `$ref`s until a node that is not one. */
const deref = (doc: Json, node: Json): Json => {
  let current = node
  for (let i = 0; i < 20 && isObject(current) && typeof current["$ref"] === "string"; i++) {
    current = pointer(doc, current["$ref"])
  }
  return current
}

const escapePointer = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1")

interface Operation {
  readonly template: string
  readonly method: string
  readonly regex: RegExp
  readonly names: ReadonlyArray<string>
  readonly at: string
  readonly node: Record<string, Json>
  readonly parameters: ReadonlyArray<Record<string, Json>>
}

export interface Options {
  /** The description's file under `specs/`. */
  readonly file: string
  /** The path prefix the fake serves the description's paths under (the server URL's path), e.g. `/v5`. */
  readonly basePath?: string
  /** Requests the fake handles from rules written out in the fake (upload sessions, …), not from the description. */
  readonly outside?: (request: FakeServer.Recorded) => boolean
  /** Query parameters the platform accepts beside those the description lists (each with a link in the fake). */
  readonly extraQuery?: ReadonlyArray<string>
}

export interface ApiDescription {
  readonly doc: Record<string, Json>
  /** The check for `FakeServer.start`: request problems, and problems of the fake's own answers. */
  readonly check: FakeServer.Check
  /** The problems of one request (empty when it conforms), for tests of the check itself. */
  readonly problemsOf: (request: FakeServer.Recorded) => ReadonlyArray<string>
  /** Validates a JSON value against the schema at a JSON pointer of the description (`/components/schemas/Video`). */
  readonly validate: (at: string, data: unknown, what: string) => ReadonlyArray<string>
}

const cache = new Map<string, ApiDescription>()

/** Loads (once per process) a vendored description as a request and answer check. */
export const load = (options: Options): ApiDescription => {
  const key = `${options.file}|${options.basePath ?? ""}|${(options.extraQuery ?? []).join(",")}`
  const hit = cache.get(key)
  if (hit !== undefined) return { ...hit, check: withOptions(hit, options) }
  const raw = read(options.file)
  const is31 = String(raw["openapi"] ?? "").startsWith("3.1")
  const doc = enumerationUnions(is31 ? raw : normalise30(raw)) as Record<string, Json>
  const made = fromDocument(doc, is31, options.basePath ?? "", options.extraQuery ?? [])
  cache.set(key, made)
  return { ...made, check: withOptions(made, options) }
}

const withOptions = (description: ApiDescription, options: Options): FakeServer.Check => ({
  request: (request) => options.outside?.(request) === true ? [] : description.check.request(request),
  reply: (request, reply) => options.outside?.(request) === true ? [] : description.check.reply?.(request, reply) ?? []
})

const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

/**
 * Builds the check from a document already in JSON Schema form (an OpenAPI 3.1 file, a normalised 3.0
 * file, or a description assembled in memory as for Telegram's reference).
 */
export const fromDocument = (
  doc: Record<string, Json>,
  is2020: boolean,
  basePath: string,
  extraQuery: ReadonlyArray<string> = []
): ApiDescription => {
  const options = { strict: false, allErrors: true, validateSchema: false, logger: false as const }
  const strictAjv = is2020 ? new Ajv2020(options) : new Ajv(options)
  // Query strings, path segments and form fields arrive as text: their declared types are read from it.
  const coercingAjv = is2020
    ? new Ajv2020({ ...options, coerceTypes: "array" })
    : new Ajv({ ...options, coerceTypes: "array" })
  for (const ajv of [strictAjv, coercingAjv]) {
    addFormats(ajv)
    ajv.addSchema(doc as object, "api")
  }
  const compiled = new Map<string, ValidateFunction>()
  const validator = (ajv: Ajv | Ajv2020, at: string): ValidateFunction => {
    const id = `${ajv === strictAjv ? "s" : "c"}${at}`
    let fn = compiled.get(id)
    if (fn === undefined) {
      fn = ajv.compile({ $ref: `api#${at}` })
      compiled.set(id, fn)
    }
    return fn
  }
  const errorsOf = (fn: ValidateFunction, what: string): ReadonlyArray<string> =>
    (fn.errors ?? []).slice(0, 8).map((e) =>
      `${what}${e.instancePath === "" ? "" : e.instancePath} ${e.message ?? "is invalid"}${
        e.params !== undefined && Object.keys(e.params).length > 0 ? ` ${JSON.stringify(e.params)}` : ""
      }`
    )

  const paths = isObject(doc["paths"]) ? doc["paths"] : {}
  const operations: Array<Operation> = []
  for (const [template, itemRaw] of Object.entries(paths)) {
    const item = deref(doc, itemRaw)
    if (!isObject(item)) continue
    const names: Array<string> = []
    const pattern = template.split(/(\{[^}]+\})/).map((piece) => {
      const name = /^\{([^}]+)\}$/.exec(piece)?.[1]
      if (name === undefined) return piece.replace(/[.*+?^$()|[\]\\]/g, "\\$&")
      names.push(name)
      return "([^/]+)"
    }).join("")
    const shared = Array.isArray(item["parameters"]) ? item["parameters"] : []
    for (const method of methods) {
      const node = item[method]
      if (!isObject(node)) continue
      const own = Array.isArray(node["parameters"]) ? node["parameters"] : []
      const parameters = new Map<string, Record<string, Json>>()
      for (const p of [...shared, ...own]) {
        const param = deref(doc, p)
        if (isObject(param)) parameters.set(`${String(param["in"])}:${String(param["name"])}`, param)
      }
      operations.push({
        template,
        method: method.toUpperCase(),
        regex: new RegExp(`^${basePath.replace(/[.*+?^$()|[\]\\]/g, "\\$&")}${pattern}$`),
        names,
        at: `/paths/${escapePointer(template)}/${method}`,
        node,
        parameters: [...parameters.values()]
      })
    }
  }
  // A literal path wins over a templated one (`/2/media/upload/initialize` over `/2/media/upload/{id}`).
  operations.sort((a, b) => a.names.length - b.names.length)

  const match = (request: FakeServer.Recorded): Operation | ReadonlyArray<string> => {
    const forPath = operations.filter((op) => op.regex.test(request.path))
    if (forPath.length === 0) return [`${request.method} ${request.path}: no such path in the description`]
    const op = forPath.find((o) => o.method === request.method)
    return op ??
      [`${request.method} ${request.path}: the description allows only ${forPath.map((o) => o.method).join(", ")}`]
  }

  const paramSchemaAt = (op: Operation, param: Record<string, Json>): string | undefined => {
    const index = (Array.isArray(op.node["parameters"]) ? op.node["parameters"] : []).findIndex((p) => {
      const d = deref(doc, p)
      return isObject(d) && d["name"] === param["name"] && d["in"] === param["in"]
    })
    if (index >= 0) {
      const raw = (op.node["parameters"] as ReadonlyArray<Json>)[index]!
      if (isObject(raw) && typeof raw["$ref"] === "string") return `${raw["$ref"].replace(/^#/, "")}/schema`
      return `${op.at}/parameters/${index}/schema`
    }
    const itemAt = op.at.replace(/\/[a-z]+$/, "")
    const item = deref(doc, pointer(doc, itemAt))
    const shared = isObject(item) && Array.isArray(item["parameters"]) ? item["parameters"] : []
    const i = shared.findIndex((p) => {
      const d = deref(doc, p)
      return isObject(d) && d["name"] === param["name"] && d["in"] === param["in"]
    })
    if (i < 0) return undefined
    const raw = shared[i]!
    if (isObject(raw) && typeof raw["$ref"] === "string") return `${raw["$ref"].replace(/^#/, "")}/schema`
    return `${itemAt}/parameters/${i}/schema`
  }

  const checkParam = (op: Operation, param: Record<string, Json>, value: string): ReadonlyArray<string> => {
    const at = paramSchemaAt(op, param)
    if (at === undefined) return []
    const schema = deref(doc, pointer(doc, at))
    const isArray = isObject(schema) &&
      (schema["type"] === "array" || (Array.isArray(schema["type"]) && schema["type"].includes("array")))
    const exploded = param["explode"] === true
    const data: Json = isArray && !exploded ? value.split(",") : value
    const fn = validator(coercingAjv, at)
    return fn(data) ? [] : errorsOf(fn, `${String(param["in"])} parameter ${String(param["name"])}`)
  }

  const mediaTypeOf = (request: FakeServer.Recorded) =>
    (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()

  /** A form's fields as an object: text as text, a file as its name (a `binary` string to the schema). */
  const formObject = (form: FormData): Record<string, Json> => {
    const out: Record<string, Json> = {}
    for (const [name, value] of form.entries()) {
      const v = typeof value === "string" ? value : (value as File).name
      const existing = out[name]
      out[name] = existing === undefined ? v : Array.isArray(existing) ? [...existing, v] : [existing as Json, v]
    }
    return out
  }

  const requestProblems = (request: FakeServer.Recorded): ReadonlyArray<string> => {
    const found = match(request)
    if (!("regex" in found)) return found
    const op = found
    const problems: Array<string> = []
    const values = op.regex.exec(request.path)!.slice(1)
    const known = new Set<string>(extraQuery)
    for (const param of op.parameters) {
      const name = String(param["name"])
      const where = param["in"]
      if (where === "path") {
        const index = op.names.indexOf(name)
        if (index >= 0) problems.push(...checkParam(op, param, decodeURIComponent(values[index]!)))
      } else if (where === "query") {
        known.add(name)
        const all = request.query.getAll(name)
        if (all.length === 0) {
          if (param["required"] === true) problems.push(`query parameter ${name} is required`)
        } else {
          for (const v of all) problems.push(...checkParam(op, param, v))
        }
      } else if (where === "header") {
        const value = request.headers[name.toLowerCase()]
        if (value === undefined) {
          if (param["required"] === true) problems.push(`header ${name} is required`)
        } else problems.push(...checkParam(op, param, String(value)))
      }
    }
    for (const name of new Set(request.query.keys())) {
      if (!known.has(name)) problems.push(`query parameter ${name} is not in the description`)
    }

    const bodyNode = deref(doc, op.node["requestBody"] ?? null)
    const hasBody = request.body.byteLength > 0
    if (!isObject(bodyNode)) {
      if (hasBody) problems.push("the operation takes no request body")
      return problems
    }
    if (!hasBody) {
      if (bodyNode["required"] === true) problems.push("a request body is required")
      return problems
    }
    const content = isObject(bodyNode["content"]) ? bodyNode["content"] : {}
    const type = mediaTypeOf(request)
    const declared = Object.keys(content).find((k) => k.toLowerCase() === type) ??
      Object.keys(content).find((k) => k === "*/*" || (k.endsWith("/*") && type.startsWith(k.slice(0, -1))))
    if (declared === undefined) {
      problems.push(`Content-Type ${type || "(none)"} is not one of ${Object.keys(content).join(", ")}`)
      return problems
    }
    const media = content[declared]
    if (!isObject(media) || media["schema"] === undefined) return problems
    const at = `${op.at}/requestBody/content/${escapePointer(declared)}/schema`
    const schemaAt = isObject(op.node["requestBody"]) && typeof op.node["requestBody"]["$ref"] === "string"
      ? `${op.node["requestBody"]["$ref"].replace(/^#/, "")}/content/${escapePointer(declared)}/schema`
      : at
    if (type.includes("json")) {
      if (request.json === undefined) return [...problems, "the body is not JSON"]
      const fn = validator(strictAjv, schemaAt)
      if (!fn(request.json)) problems.push(...errorsOf(fn, "body"))
    } else if (type === "multipart/form-data" || type === "application/x-www-form-urlencoded") {
      if (request.form === undefined) return [...problems, "the body is not a form"]
      const fn = validator(coercingAjv, schemaAt)
      if (!fn(formObject(request.form))) problems.push(...errorsOf(fn, "form"))
    }
    return problems
  }

  const replyProblems = (request: FakeServer.Recorded, reply: FakeServer.Reply): ReadonlyArray<string> => {
    const found = match(request)
    if (!("regex" in found)) return []
    const responses = deref(doc, found.node["responses"] ?? null)
    if (!isObject(responses)) return []
    const status = String(reply.status)
    const range = `${status[0]}XX`
    const declared = [status, range, range.toLowerCase(), "default"].find((k) => responses[k] !== undefined)
    if (declared === undefined) {
      return reply.status < 300 ? [`status ${status} is not among the described answers`] : []
    }
    // A catch-all error schema does not model the errors a platform's edge answers (X's own docs show
    // 401 and 429 as `about:blank` problems its description's `default` has no room for): error
    // answers are checked only where the description names their status.
    if (declared === "default" && reply.status >= 300) return []
    const response = deref(doc, responses[declared]!)
    const content = isObject(response) && isObject(response["content"]) ? response["content"] : undefined
    const body = reply.body
    if (content === undefined || body === undefined || typeof body === "string" || Buffer.isBuffer(body)) return []
    const sentType = (reply.headers?.["content-type"] ?? "application/json").split(";")[0]!.trim()
    const json = Object.keys(content).find((k) => k === sentType) ??
      Object.keys(content).find((k) => k.includes("json"))
    if (json === undefined) return []
    const responseRef = isObject(responses[declared]) && typeof (responses[declared] as JsonObject)["$ref"] === "string"
      ? String((responses[declared] as JsonObject)["$ref"]).replace(/^#/, "")
      : `${found.at}/responses/${escapePointer(declared)}`
    const fn = validator(strictAjv, `${responseRef}/content/${escapePointer(json)}/schema`)
    return fn(body) ? [] : errorsOf(fn, "answer")
  }

  return {
    doc,
    check: { request: requestProblems, reply: replyProblems },
    problemsOf: requestProblems,
    validate: (at, data, what) => {
      const fn = validator(strictAjv, at)
      return fn(data) ? [] : errorsOf(fn, what)
    }
  }
}
