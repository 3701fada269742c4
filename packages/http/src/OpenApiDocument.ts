/**
 * Final touches to the generated OpenAPI document so that it says what the server really sends:
 * HttpApi's built-in 400 schema (`HttpApiDecodeError`) is replaced by the envelope (the request
 * middleware turns decode failures into `validation_error` envelopes), each error status gets its
 * description, and the plain-text 401 for a missing Authorization header is listed as `text/plain`.
 */

const descriptions: Record<string, string> = {
  "400": "invalid_json, validation_error (details.validation_errors: [{path, message}]), invalid_id and the " +
    "endpoint's other 400 codes",
  "401": "Auth-layer shape: invalid_api_key, api_key_revoked or api_key_expired (only error.message, " +
    "error.code and meta.timestamp). Without an Authorization header: plain-text `Unauthorized`",
  "402": "subscription_required (auth-layer shape, with error.subscription_status); elsewhere " +
    "insufficient_credits or upgrade_required",
  "403": "insufficient_scope",
  "404": "not_found: absent, in another organization, or outside a restricted key",
  "409": "The resource's state does not allow the action",
  "422": "permanent_failure_circuit_breaker",
  "429": "rate_limit_exceeded (details{limit, remaining, reset_at}; headers X-RateLimit-Limit, " +
    "X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After), post_limit_reached, daily_limit_reached",
  "500": "internal_error, service_unavailable or generation_failed (retryable)"
}

const keyRequiredDescription = "Auth-layer shape (only error.message, error.code and meta.timestamp): " +
  "api_key_required when no API key is presented (no Authorization header, an empty one or another scheme); " +
  "invalid_api_key, api_key_revoked or api_key_expired for a presented key"

const decodeErrorRef = "#/components/schemas/HttpApiDecodeError"

type Json = Record<string, unknown>

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const withoutDecodeError = (schema: unknown): unknown => {
  if (!isObject(schema) || !Array.isArray(schema.anyOf)) return schema
  const rest = schema.anyOf.filter((s) => !(isObject(s) && s.$ref === decodeErrorRef))
  if (rest.length === schema.anyOf.length) return schema
  return rest.length === 1 ? rest[0] : { ...schema, anyOf: rest }
}

const fixResponses = (responses: Json): Json => {
  const out: Json = {}
  for (const [status, response] of Object.entries(responses)) {
    if (!isObject(response)) continue
    const content = isObject(response.content) ? response.content : undefined
    const json = content !== undefined && isObject(content["application/json"])
      ? content["application/json"]
      : undefined
    // A 400 that only HttpApi's own decode error described: the endpoint takes no input we decode.
    if (json !== undefined && isObject(json.schema) && json.schema.$ref === decodeErrorRef) continue
    let fixed: Json = { ...response }
    if (json !== undefined) {
      let schema = withoutDecodeError(json.schema)
      const extra: Json = {}
      if (status === "401" && isObject(schema) && Array.isArray(schema.anyOf)) {
        const envelope = schema.anyOf.filter((s) => !(isObject(s) && s.type === "string"))
        schema = envelope.length === 1 ? envelope[0] : { anyOf: envelope }
        extra["text/plain"] = { schema: { type: "string", enum: ["Unauthorized"] } }
      }
      fixed = { ...fixed, content: { ...content, "application/json": { ...json, schema }, ...extra } }
    }
    // A 401 without the plain-text alternative is the connect bridge's: a missing key is api_key_required.
    const keyRequired = status === "401" && !(isObject(fixed.content) && "text/plain" in fixed.content)
    const description = keyRequired ? keyRequiredDescription : descriptions[status]
    if (description !== undefined && Number(status) >= 400 && status !== "503") fixed.description = description
    out[status] = fixed
  }
  return out
}

export const finish = (spec: Record<string, unknown>): Record<string, unknown> => {
  const paths: Json = {}
  for (const [path, item] of Object.entries(isObject(spec.paths) ? spec.paths : {})) {
    if (!isObject(item)) continue
    const ops: Json = {}
    for (const [method, op] of Object.entries(item)) {
      ops[method] = isObject(op) && isObject(op.responses) ? { ...op, responses: fixResponses(op.responses) } : op
    }
    paths[path] = ops
  }
  const components = isObject(spec.components) ? spec.components : {}
  const schemas = isObject(components.schemas) ? { ...components.schemas } : {}
  delete schemas.HttpApiDecodeError
  delete schemas.Issue
  delete schemas.PropertyKey
  return { ...spec, paths, components: { ...components, schemas } }
}
