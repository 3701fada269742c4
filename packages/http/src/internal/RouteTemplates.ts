/**
 * A request's route as its template (`/api/v1/posts/:id`), never the path it was sent to: metrics
 * labelled by raw paths would grow a series per post. Templates are matched segment by segment,
 * literal segments before parameters, and a trailing `*` takes the rest of the path; a path no
 * template matches is `unmatched`, so a scan of random URLs adds one series, not one per URL.
 */

export const unmatched = "unmatched"

interface Template {
  readonly route: string
  readonly segments: ReadonlyArray<string>
  /** Ends with `*`: matches any path of at least `segments.length - 1` segments under its prefix. */
  readonly rest: boolean
}

const split = (path: string): Array<string> => path.split("/").filter((s) => s !== "")

/** Fewer parameters first: `/posts/retry-failed` wins over `/posts/:id`. */
const specificity = (t: Template): number =>
  t.segments.filter((s) => s.startsWith(":") || s === "*").length * 1000 + (t.rest ? 1 : 0)

const matches = (template: Template, segments: ReadonlyArray<string>): boolean => {
  const fixed = template.rest ? template.segments.length - 1 : template.segments.length
  if (template.rest ? segments.length < fixed : segments.length !== fixed) return false
  for (let i = 0; i < fixed; i++) {
    const expected = template.segments[i]!
    if (!expected.startsWith(":") && expected !== segments[i]) return false
  }
  return true
}

/** A matcher over `routes` (`METHOD /path/:param`, or `/path/*`): `(method, url) => template`. */
export const make = (routes: ReadonlyArray<{ readonly method: string; readonly path: string }>) => {
  const byMethod = new Map<string, Array<Template>>()
  for (const { method, path } of routes) {
    const segments = split(path)
    const template: Template = { route: path, segments, rest: segments[segments.length - 1] === "*" }
    const list = byMethod.get(method) ?? []
    list.push(template)
    byMethod.set(method, list)
  }
  for (const list of byMethod.values()) list.sort((a, b) => specificity(a) - specificity(b))
  return (method: string, url: string): string => {
    const candidates = byMethod.get(method === "HEAD" ? "GET" : method)
    if (candidates === undefined) return unmatched
    const query = url.indexOf("?")
    const segments = split(query < 0 ? url : url.slice(0, query))
    for (const template of candidates) if (matches(template, segments)) return template.route
    return unmatched
  }
}
