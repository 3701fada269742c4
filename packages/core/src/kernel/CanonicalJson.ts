/**
 * Canonical JSON, the form hashed wherever two request bodies must compare equal regardless of key
 * order and spacing: the circuit breaker of POST /posts and the idempotency fingerprint of a request.
 */
type CanonicalTask = { readonly literal: string } | { readonly value: unknown }

/**
 * Canonical JSON: object keys sorted at every depth, `undefined` members dropped, no whitespace.
 * Iterative (an explicit stack of what is left to write), so no nesting depth overflows the call stack.
 */
export const canonicalJson = (value: unknown): string => {
  const out: Array<string> = []
  const stack: Array<CanonicalTask> = [{ value }]
  while (stack.length > 0) {
    const task = stack.pop()!
    if ("literal" in task) {
      out.push(task.literal)
      continue
    }
    const v = task.value
    if (v === null || typeof v !== "object") {
      out.push(v === undefined ? "null" : JSON.stringify(v))
    } else if (Array.isArray(v)) {
      // Pushed in reverse: popped as "[", v[0], ",", v[1], ..., "]".
      stack.push({ literal: "]" })
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push({ value: v[i] })
        if (i > 0) stack.push({ literal: "," })
      }
      stack.push({ literal: "[" })
    } else {
      const entries = Object.entries(v as Record<string, unknown>)
        .filter(([, member]) => member !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      stack.push({ literal: "}" })
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, member] = entries[i]!
        stack.push({ value: member })
        stack.push({ literal: `${JSON.stringify(key)}:` })
        if (i > 0) stack.push({ literal: "," })
      }
      stack.push({ literal: "{" })
    }
  }
  return out.join("")
}
