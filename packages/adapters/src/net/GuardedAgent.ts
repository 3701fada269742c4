/**
 * The one way Herald opens a connection to an address a user can influence (webhook receivers, media
 * and link-card URLs, a Bluesky `service` or PDS): node `http`/`https` agents whose every new socket
 * is made by `AddressGuard`. For each connection the host is resolved ONCE, every address it resolves
 * to is checked, and the socket connects to those checked addresses only (the host still goes into
 * `Host` and the TLS server name). A DNS answer that changes between a check and a connection
 * (rebinding) therefore cannot reach a refused address: there is no second resolution to change.
 *
 * Redirects are never followed here (node's `http` does not follow them); a caller that follows one
 * sends a new request through the same agents, so the next hop is checked like the first.
 *
 * Origins the operator configured (`trustedOrigins`, exact `scheme://host:port`) skip the range check:
 * an operator may point a platform at a PDS on a private network or at a test fake on loopback. Users
 * cannot add to that list; anything they supply is checked.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import * as Http from "node:http"
import * as Https from "node:https"
import * as Net from "node:net"
import type * as Stream from "node:stream"
import * as Tls from "node:tls"
import * as AddressGuard from "./AddressGuard.js"

export interface AgentOptions extends AddressGuard.GuardOptions {
  /** Origins (`https://pds.example:443`) set by the operator; connected to without the range check. */
  readonly trustedOrigins?: ReadonlyArray<string>
  /** Extra trusted CA certificates (PEM), for receivers behind a private CA. */
  readonly ca?: string | ReadonlyArray<string>
}

export interface GuardedAgents {
  readonly http: Http.Agent
  readonly https: Https.Agent
}

/**
 * `https://host:443` (an IPv6 host without brackets), the form `trustedOrigins` are compared in;
 * undefined when it does not parse.
 */
export const originKey = (raw: string): string | undefined => {
  try {
    const url = new URL(raw)
    const port = url.port === "" ? (url.protocol === "https:" ? "443" : url.protocol === "http:" ? "80" : "") : url.port
    const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
    return `${url.protocol}//${host.toLowerCase()}:${port}`
  } catch {
    return undefined
  }
}

/** The refusal behind a failed request, wherever the client wrapped it (`cause` chains). */
export const refusalIn = AddressGuard.refusalIn

/** What node's agents pass to `createConnection`: called with the socket, or with the error alone. */
type Callback = (err: Error | null, stream?: Stream.Duplex) => void

type NodeCallback = (err: Error | null, stream: Stream.Duplex) => void

/** Node's own agents call back with the error alone when a connection cannot be made. */
const adapt = (callback: NodeCallback | undefined): Callback => (err, stream) =>
  callback?.(err, stream as Stream.Duplex)

/**
 * Resolves and checks the host of one connection, then opens it to the checked addresses only.
 * The socket is handed over through the callback (node's agents accept a socket made asynchronously).
 */
const connectChecked = (
  protocol: "http:" | "https:",
  options: Http.ClientRequestArgs | Https.RequestOptions,
  guard: AgentOptions,
  trusted: ReadonlySet<string>,
  callback: Callback
): void => {
  const rawHost = options.host ?? options.hostname ?? "localhost"
  const host = rawHost.startsWith("[") ? rawHost.slice(1, -1) : rawHost
  const port = Number(options.port ?? (protocol === "https:" ? 443 : 80))
  const open = (lookup: Net.LookupFunction | undefined) => {
    const base = { ...options, host, port, ...(lookup === undefined ? {} : { lookup }) }
    return protocol === "https:" ? Tls.connect(base as Tls.ConnectionOptions) : Net.connect(base as Net.NetConnectOpts)
  }
  const url = `${protocol}//${host.includes(":") ? `[${host}]` : host}:${port}/`
  if (trusted.has(`${protocol}//${host.toLowerCase()}:${port}`)) {
    callback(null, open(undefined))
    return
  }
  // The scheme was the caller's to check (`AddressGuard.parseUrl`); here only the address matters.
  Effect.runPromise(Effect.either(AddressGuard.resolveAndCheck(url, { ...guard, allowPlainHttp: true }))).then(
    (checked) => {
      if (checked._tag === "Left") {
        // An Error carrying the refusal: the request fails with it, and nothing is sent.
        callback(checked.left)
        return
      }
      callback(null, open(AddressGuard.lookupFor(checked.right)))
    },
    (error: unknown) => callback(error instanceof Error ? error : new Error("the connection failed"))
  )
}

/**
 * The guarded agents. `keepAlive` is off: one connection per request, so nothing pooled outlives a
 * request or its timeout, and every request's connection is checked afresh.
 */
export const make = (options: AgentOptions): GuardedAgents => {
  const trusted = new Set((options.trustedOrigins ?? []).flatMap((o) => originKey(o) ?? []))
  const ca = options.ca === undefined ? {} : { ca: typeof options.ca === "string" ? options.ca : [...options.ca] }
  class GuardedHttpAgent extends Http.Agent {
    override createConnection(
      request: Http.ClientRequestArgs,
      callback?: NodeCallback
    ): Stream.Duplex | null | undefined {
      connectChecked("http:", request, options, trusted, adapt(callback))
      return undefined
    }
  }
  class GuardedHttpsAgent extends Https.Agent {
    override createConnection(
      request: Https.RequestOptions,
      callback?: NodeCallback
    ): Stream.Duplex | null | undefined {
      connectChecked("https:", { ...request, ...ca }, options, trusted, adapt(callback))
      return undefined
    }
  }
  return { http: new GuardedHttpAgent({ keepAlive: false }), https: new GuardedHttpsAgent({ keepAlive: false, ...ca }) }
}

/**
 * An `HttpClient` whose every request goes through the guarded agents: pinned to checked addresses,
 * redirects answered as they are (a 3xx is the response, never followed).
 */
export const httpClient = (options: AgentOptions): Effect.Effect<HttpClient.HttpClient> => {
  const agents = make(options)
  return NodeHttpClient.make.pipe(
    Effect.provideService(NodeHttpClient.HttpAgent, {
      [NodeHttpClient.HttpAgentTypeId]: NodeHttpClient.HttpAgentTypeId,
      http: agents.http,
      https: agents.https
    })
  )
}
