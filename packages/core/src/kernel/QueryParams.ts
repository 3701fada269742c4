/**
 * Query parameters read leniently, the way the spec's list endpoints behave: a value that cannot be
 * read is ignored rather than refused. GET /posts, GET /campaigns and GET /media read their paging
 * through this.
 */

/** Raw query parameters as the HTTP layer hands them over: one value or several per name. */
export type RawParams = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

/** The first value of `name`, trimmed. */
export const firstParam = (params: RawParams, name: string): string | undefined => {
  const v = params[name]
  const s = typeof v === "string" ? v : v?.[0]
  return s === undefined ? undefined : s.trim()
}

/** Every value of `name`, comma lists split, trimmed, lower-cased, empties dropped. */
export const listParam = (params: RawParams, name: string): ReadonlyArray<string> => {
  const v = params[name]
  const all = typeof v === "string" ? [v] : v ?? []
  return all.flatMap((s) => s.split(",")).map((s) => s.trim().toLowerCase()).filter((s) => s !== "")
}

/** A whole number of at least 1, or undefined. */
export const positiveInt = (raw: string | undefined): number | undefined =>
  raw !== undefined && /^\d+$/.test(raw) && Number(raw) >= 1 && Number.isSafeInteger(Number(raw))
    ? Number(raw)
    : undefined

export const defaultPageSize = 20
export const maxPageSize = 100

/**
 * `limit` and `offset`: a limit above 100 is clamped to 100, and 0, a negative or junk limit gives the
 * default 20; an offset that is not a non-negative integer gives 0.
 */
export const pageParams = (params: RawParams): { readonly limit: number; readonly offset: number } => {
  const limitRaw = firstParam(params, "limit")
  const limitNumber = limitRaw !== undefined && /^-?\d+$/.test(limitRaw) ? Number(limitRaw) : undefined
  const limit = limitNumber === undefined || limitNumber < 1 ? defaultPageSize : Math.min(limitNumber, maxPageSize)
  const offsetRaw = firstParam(params, "offset")
  const offset = offsetRaw !== undefined && /^\d+$/.test(offsetRaw) && Number.isSafeInteger(Number(offsetRaw))
    ? Number(offsetRaw)
    : 0
  return { limit, offset }
}
