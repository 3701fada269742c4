/**
 * A small JSON Schema checker for the subset the generated OpenAPI document uses: $ref to
 * components, type, enum, const, properties, required, additionalProperties, items, anyOf, oneOf,
 * allOf. Returns the problems found (empty when the value conforms).
 */
type Json = Record<string, unknown>

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const typeOf = (value: unknown): string => {
  if (value === null) return "null"
  if (Array.isArray(value)) return "array"
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number"
  return typeof value
}

const matchesType = (value: unknown, type: unknown): boolean => {
  if (Array.isArray(type)) return type.some((t) => matchesType(value, t))
  const actual = typeOf(value)
  return actual === type || (type === "number" && actual === "integer")
}

export const validate = (document: Json, schema: unknown, value: unknown, path = "$"): Array<string> => {
  if (schema === true || schema === undefined) return []
  if (schema === false) return [`${path}: no value allowed`]
  if (!isObject(schema)) return [`${path}: unreadable schema`]
  if (typeof schema.$ref === "string") {
    const name = /^#\/components\/schemas\/(.+)$/.exec(schema.$ref)?.[1]
    const components = isObject(document.components) && isObject(document.components.schemas)
      ? document.components.schemas
      : {}
    const target = name === undefined ? undefined : components[name]
    if (target === undefined) return [`${path}: unresolved ${schema.$ref}`]
    return validate(document, target, value, path)
  }
  const errors: Array<string> = []
  if (schema.type !== undefined && !matchesType(value, schema.type)) {
    return [`${path}: expected ${JSON.stringify(schema.type)}, got ${typeOf(value)}`]
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => e === value)) {
    errors.push(`${path}: ${JSON.stringify(value)} not in ${JSON.stringify(schema.enum)}`)
  }
  if ("const" in schema && schema.const !== value) errors.push(`${path}: expected ${JSON.stringify(schema.const)}`)
  if (Array.isArray(schema.anyOf) && !schema.anyOf.some((s) => validate(document, s, value, path).length === 0)) {
    errors.push(`${path}: matches none of anyOf`)
  }
  if (
    Array.isArray(schema.oneOf) &&
    schema.oneOf.filter((s) => validate(document, s, value, path).length === 0).length !== 1
  ) {
    errors.push(`${path}: does not match exactly one of oneOf`)
  }
  if (Array.isArray(schema.allOf)) {
    for (const s of schema.allOf) errors.push(...validate(document, s, value, path))
  }
  if (isObject(value)) {
    const properties = isObject(schema.properties) ? schema.properties : {}
    if (Array.isArray(schema.required)) {
      for (const key of schema.required) {
        if (typeof key === "string" && !(key in value)) errors.push(`${path}: missing required ${key}`)
      }
    }
    for (const [key, v] of Object.entries(value)) {
      if (key in properties) errors.push(...validate(document, properties[key], v, `${path}.${key}`))
      else if (schema.additionalProperties === false) errors.push(`${path}: unexpected property ${key}`)
      else if (isObject(schema.additionalProperties)) {
        errors.push(...validate(document, schema.additionalProperties, v, `${path}.${key}`))
      }
    }
  }
  if (Array.isArray(value) && schema.items !== undefined) {
    value.forEach((item, i) => errors.push(...validate(document, schema.items, item, `${path}[${i}]`)))
  }
  return errors
}
