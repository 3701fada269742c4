/**
 * The Telegram Bot API reference (`specs/telegram-bot-api.json`: the methods and types of
 * core.telegram.org/bots/api as data, see the README there) as a fake's request check. Each method
 * becomes a JSON Schema of its parameters (types, required ones, no unknown ones, the lengths and
 * constant values the reference states) and each type a definition, validated with Ajv. A request is
 * `/bot{token}/{method}` with its parameters as JSON, a urlencoded form or a multipart form (where an
 * object or array parameter is JSON text, an `InputFile` is a file part, and a file sent as
 * `attach://name` is the part `name`: https://core.telegram.org/bots/api#making-requests,
 * https://core.telegram.org/bots/api#sending-files). Answers are `{ok: true, result}` with the method's
 * return type, or `{ok: false, error_code, description, parameters?}`.
 */
import { Ajv, type ValidateFunction } from "ajv"
import addFormatsModule from "ajv-formats"
import * as ApiDescription from "./ApiDescription.js"
import type * as FakeServer from "./FakeServer.js"

interface Field {
  readonly name: string
  readonly types: ReadonlyArray<string>
  readonly required: boolean
  readonly const?: string
  readonly minLength?: number
  readonly maxLength?: number
}

interface Entry {
  readonly name: string
  readonly href: string
  readonly fields?: ReadonlyArray<Field>
  readonly returns?: ReadonlyArray<string>
  readonly subtypes?: ReadonlyArray<string>
}

interface Reference {
  readonly methods: Readonly<Record<string, Entry>>
  readonly types: Readonly<Record<string, Entry>>
}

type Schema = Record<string, unknown>

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv) => void

/** A reference type (`Integer`, `Array of PhotoSize`, `InputFile`, a type name) as JSON Schema. */
const typeSchema = (type: string): Schema => {
  if (type.startsWith("Array of ")) return { type: "array", items: typeSchema(type.slice("Array of ".length)) }
  switch (type) {
    case "Integer":
      return { type: "integer" }
    case "Float":
      return { type: "number" }
    case "String":
      return { type: "string" }
    case "Boolean":
      return { type: "boolean" }
    case "True":
      return { const: true }
    case "InputFile":
      // In a multipart body a file part, which the check reads as its file name.
      return { type: "string" }
    default:
      return { $ref: `#/$defs/${type}` }
  }
}

const fieldSchema = (field: Field): Schema => {
  // "Array of InputMediaAudio, InputMediaDocument, InputMediaPhoto and InputMediaVideo" is listed as
  // one array type per item type; the reference means one array whose items are any of them.
  const arrays = field.types.length > 1 && field.types.every((t) => t.startsWith("Array of "))
  const options = arrays
    ? [{ type: "array", items: { anyOf: field.types.map((t) => typeSchema(t.slice("Array of ".length))) } }]
    : field.types.map(typeSchema)
  const base: Schema = options.length === 1 ? options[0]! : { anyOf: options }
  return {
    ...base,
    ...(field.const === undefined ? {} : { const: field.const }),
    ...(field.minLength === undefined ? {} : { minLength: field.minLength }),
    ...(field.maxLength === undefined ? {} : { maxLength: field.maxLength })
  }
}

const objectSchema = (fields: ReadonlyArray<Field>): Schema => ({
  type: "object",
  properties: Object.fromEntries(fields.map((f) => [f.name, fieldSchema(f)])),
  required: fields.filter((f) => f.required).map((f) => f.name),
  additionalProperties: false
})

export interface TelegramDescription {
  readonly check: FakeServer.Check
  readonly problemsOf: (request: FakeServer.Recorded) => ReadonlyArray<string>
}

let loaded: TelegramDescription | undefined

export const load = (): TelegramDescription => {
  if (loaded !== undefined) return loaded
  const reference = ApiDescription.read("telegram-bot-api.json") as unknown as Reference
  const defs: Record<string, Schema> = {}
  for (const [name, type] of Object.entries(reference.types)) {
    defs[name] = type.subtypes !== undefined
      ? { anyOf: type.subtypes.map(typeSchema) }
      : objectSchema(type.fields ?? [])
  }
  const ajv = new Ajv({ strict: false, allErrors: true, logger: false })
  // Form fields are text: numbers and booleans are read from it.
  const coercing = new Ajv({ strict: false, allErrors: true, logger: false, coerceTypes: true })
  addFormats(ajv)
  addFormats(coercing)
  const compiled = new Map<string, ValidateFunction>()
  const validator = (instance: Ajv, key: string, schema: Schema) => {
    const id = `${instance === ajv ? "j" : "f"}:${key}`
    let fn = compiled.get(id)
    if (fn === undefined) {
      fn = instance.compile({ $defs: defs, ...schema })
      compiled.set(id, fn)
    }
    return fn
  }
  const errorsOf = (fn: ValidateFunction, what: string) =>
    (fn.errors ?? []).slice(0, 8).map((e) =>
      `${what}${e.instancePath === "" ? "" : e.instancePath} ${e.message ?? "is invalid"}${
        Object.keys(e.params).length > 0 ? ` ${JSON.stringify(e.params)}` : ""
      }`
    )

  const methodOf = (request: FakeServer.Recorded) => {
    const match = /^\/bot[^/]+\/(\w+)$/.exec(request.path)
    return match === null ? undefined : reference.methods[match[1]!]
  }

  const problemsOf = (request: FakeServer.Recorded): ReadonlyArray<string> => {
    const method = methodOf(request)
    if (method === undefined) return [`${request.path}: no such method in the Bot API reference`]
    const fields = method.fields ?? []
    const byName = new Map(fields.map((f) => [f.name, f]))
    const schema = objectSchema(fields)
    const type = (request.headers["content-type"] ?? "").split(";")[0]!.trim()
    if (type === "application/json") {
      if (request.json === undefined) return ["the body is not JSON"]
      const fn = validator(ajv, method.name, schema)
      return fn(request.json) ? [] : errorsOf(fn, method.name)
    }
    const problems: Array<string> = []
    const params: Record<string, unknown> = {}
    const attached = new Set<string>()
    const files: Array<string> = []
    const entries: Array<[string, string | File]> = request.form !== undefined
      ? [...request.form.entries()]
      : [...request.query.entries()]
    for (const [name, value] of entries) {
      const field = byName.get(name)
      if (typeof value !== "string") {
        if (field === undefined) files.push(name)
        else if (!field.types.includes("InputFile")) {
          problems.push(`${name}: a file where the reference takes ${field.types.join(" or ")}`)
        } else params[name] = (value as File).name
        continue
      }
      for (const m of value.matchAll(/attach:\/\/([\w-]+)/g)) attached.add(m[1]!)
      const structured = field !== undefined &&
        field.types.every((t) =>
          t.startsWith("Array of ") || !/^(Integer|Float|String|Boolean|True|InputFile)$/.test(t)
        )
      if (structured) {
        try {
          params[name] = JSON.parse(value)
        } catch {
          problems.push(`${name} must be JSON text`)
        }
      } else params[name] = value
    }
    for (const name of files) {
      if (!attached.has(name)) problems.push(`file part ${name} is neither a parameter nor named by attach://${name}`)
    }
    const fn = validator(coercing, method.name, schema)
    if (!fn(params)) problems.push(...errorsOf(fn, method.name))
    return problems
  }

  const replyProblems = (request: FakeServer.Recorded, reply: FakeServer.Reply): ReadonlyArray<string> => {
    const method = methodOf(request)
    if (method === undefined || reply.body === undefined || typeof reply.body === "string") return []
    const returns = method.returns ?? []
    const envelope: Schema = reply.status === 200
      ? {
        type: "object",
        properties: {
          ok: { const: true },
          result: returns.length === 1 ? typeSchema(returns[0]!) : { anyOf: returns.map(typeSchema) }
        },
        required: ["ok", "result"],
        additionalProperties: false
      }
      : {
        type: "object",
        properties: {
          ok: { const: false },
          error_code: { type: "integer" },
          description: { type: "string" },
          parameters: { $ref: "#/$defs/ResponseParameters" }
        },
        required: ["ok", "error_code", "description"],
        additionalProperties: false
      }
    const fn = validator(ajv, `${method.name}:${reply.status === 200 ? "ok" : "error"}`, envelope)
    return fn(reply.body) ? [] : errorsOf(fn, "answer")
  }

  loaded = { check: { request: problemsOf, reply: replyProblems }, problemsOf }
  return loaded
}
