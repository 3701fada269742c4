/**
 * Meta's insights answers (Instagram and Threads, platform reference §7, §8):
 * `data[{name, values:[{value}]}]`, or `data[{name, total_value:{value}}]` for metrics asked
 * without a period. Values that are not counts are left out.
 */
import { field, numberField, stringField } from "./PlatformHttp.js"

const count = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) ? Math.max(0, Math.floor(value)) : undefined

/** Each metric's count, by name. */
export const valuesOf = (body: unknown): ReadonlyMap<string, number> => {
  const out = new Map<string, number>()
  const data = field(body, "data")
  if (!Array.isArray(data)) return out
  for (const entry of data) {
    const name = stringField(entry, "name")
    if (name === undefined) continue
    const total = count(numberField(field(entry, "total_value"), "value"))
    const values = field(entry, "values")
    const last = Array.isArray(values) && values.length > 0
      ? count(field(values[values.length - 1], "value"))
      : undefined
    const value = total ?? last
    if (value !== undefined) out.set(name, value)
  }
  return out
}
