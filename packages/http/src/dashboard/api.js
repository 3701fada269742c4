// Calls to Herald with the session cookie. Writes carry the session's CSRF token; a 401 means the
// session has ended (expired, signed out elsewhere): the page says so and goes to sign-in.

let csrfToken = null

export const setCsrfToken = (token) => {
  csrfToken = token
}

export class ApiError extends Error {
  constructor(status, error) {
    super(error?.message ?? `HTTP ${status}`)
    this.status = status
    this.code = error?.code
    this.details = error?.details
  }
}

export const signInPath = (reason) => {
  const next = location.pathname + location.search
  const params = new URLSearchParams({ next })
  if (reason) params.set("reason", reason)
  return `/sign-in?${params}`
}

/** The JSON body of a call (the envelope's data for /api/v1; the body itself for /dashboard/api). */
export const api = async (method, path, body, options = {}) => {
  const headers = { accept: "application/json" }
  if (method !== "GET" && method !== "HEAD" && csrfToken) headers["x-csrf-token"] = csrfToken
  if (body !== undefined) headers["content-type"] = "application/json"
  const response = await fetch(path, {
    method,
    headers,
    credentials: "same-origin",
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  let json
  try {
    json = text === "" ? null : JSON.parse(text)
  } catch {
    json = null
  }
  if (!response.ok) {
    if (response.status === 401 && !options.allowUnauthorized) {
      location.assign(signInPath("expired"))
      // The page is leaving; a caller never sees this call settle.
      await new Promise(() => {})
    }
    throw new ApiError(response.status, json?.error ?? { message: `${response.status} ${response.statusText}` })
  }
  if (json !== null && typeof json === "object" && "data" in json && "error" in json) return json.data
  return json
}

export const v1 = (method, path, body) => api(method, `/api/v1${path}`, body)
