/**
 * What the Meta OAuth fakes share (platform reference §5): Meta's error body
 * `{error:{message,type,code,error_subcode?,fbtrace_id}}`, token strings, and reading the token a
 * request carries (the `access_token` parameter, or a bearer header).
 */
import { randomBytes } from "node:crypto"
import type * as FakeServer from "../../platforms/fakes/FakeServer.js"

export const metaError = (
  status: number,
  message: string,
  code: number,
  extra: { readonly subcode?: number; readonly type?: string; readonly isTransient?: boolean } = {}
): FakeServer.Reply => ({
  status,
  body: {
    error: {
      message,
      type: extra.type ?? "OAuthException",
      code,
      ...(extra.subcode === undefined ? {} : { error_subcode: extra.subcode }),
      ...(extra.isTransient === undefined ? {} : { is_transient: extra.isTransient }),
      fbtrace_id: `A${randomBytes(8).toString("hex")}`
    }
  }
})

/** Meta's answer to a token it cannot use. */
export const invalidToken = metaError(400, "Invalid OAuth access token - Cannot parse access token", 190)
export const expiredToken = metaError(
  400,
  "Error validating access token: The session has been invalidated because the user changed their password or " +
    "Facebook has changed the session for security reasons.",
  190,
  { subcode: 460 }
)
export const noToken = metaError(
  400,
  "An active access token must be used to query information about the current user.",
  2500
)

export const token = (prefix: string) => `${prefix}${randomBytes(24).toString("base64url")}`

/** The token of a request: `access_token` in the query or form, else `Authorization: Bearer`. */
export const tokenOf = (request: FakeServer.Recorded): string | undefined => {
  const fromQuery = request.query.get("access_token") ?? request.form?.get("access_token")
  if (typeof fromQuery === "string" && fromQuery !== "") return fromQuery
  return /^(?:Bearer|OAuth) (.+)$/.exec(request.headers.authorization ?? "")?.[1]
}

/** Reads a query or form parameter as a string. */
export const param = (request: FakeServer.Recorded, name: string): string | undefined => {
  const value = request.query.get(name) ?? request.form?.get(name)
  return typeof value === "string" ? value : undefined
}

/**
 * Checks what the browser is sent to: path, client id, response type, comma-separated scopes, no PKCE
 * (Meta's server flows take none), a redirect URI and a state. Returns the redirect parameters.
 */
export const checkAuthorize = (
  authorizeUrl: string,
  expected: { readonly path: string; readonly clientId: string; readonly scopes: ReadonlyArray<string> }
) => {
  const url = new URL(authorizeUrl)
  const p = url.searchParams
  if (url.pathname !== expected.path) throw new Error(`authorize path ${url.pathname}, expected ${expected.path}`)
  if (p.get("client_id") !== expected.clientId) throw new Error("unknown client_id")
  if (p.get("response_type") !== "code") throw new Error("response_type must be code")
  const scopes = (p.get("scope") ?? "").split(",")
  for (const scope of expected.scopes) if (!scopes.includes(scope)) throw new Error(`scope ${scope} missing`)
  if (p.has("code_challenge")) throw new Error("no PKCE expected")
  const redirectUri = p.get("redirect_uri")
  const state = p.get("state")
  if (redirectUri === null || state === null) throw new Error("missing redirect_uri or state")
  return { redirectUri, state }
}

export const redirect = (redirectUri: string, params: Readonly<Record<string, string>>, hash = "") => {
  const back = new URL(redirectUri)
  for (const [key, value] of Object.entries(params)) back.searchParams.set(key, value)
  return back.toString() + hash
}
