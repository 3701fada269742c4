/**
 * The SSRF guard for outbound requests to user-supplied URLs (webhooks, media imports, link cards, a
 * Bluesky service or PDS); `GuardedAgent` applies it to every connection those requests make.
 *
 * A target is checked once: the URL is parsed (WHATWG, which already turns `2130706433`, `0177.0.0.1`
 * and `0x7f.1` into `127.0.0.1`), a host name is resolved, and every resolved address must be a public
 * unicast address. The caller then connects to the checked addresses only (see `lookupFor`), so a DNS
 * answer that changes between the check and the connection (rebinding) cannot slip through.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import ipaddr from "ipaddr.js"
import * as Dns from "node:dns"
import type * as Net from "node:net"

export type RefusalReason = "invalid_url" | "refused_address" | "unresolvable"

/** Messages name the host, never the full URL: paths and queries often carry receivers' tokens. */
export class AddressRefused extends Data.TaggedError("AddressRefused")<{
  readonly reason: RefusalReason
  readonly message: string
}> {}

/** The refusal behind a failed request, wherever the client wrapped it (`cause` chains). */
export const refusalIn = (error: unknown): AddressRefused | undefined => {
  let current: unknown = error
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    if (current instanceof AddressRefused) return current
    current = typeof current === "object" && "cause" in current
      ? (current as { readonly cause: unknown }).cause
      : undefined
  }
  return undefined
}

export interface ResolvedAddress {
  readonly address: string
  readonly family: 4 | 6
}

export type Resolver = (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>

export interface GuardOptions {
  /** Operator switch (`HERALD_WEBHOOKS_ALLOW_PRIVATE=true`): private and local targets, and plain http. */
  readonly allowPrivate: boolean
  /** Plain `http:` even when private targets are refused (media imports may want it). */
  readonly allowPlainHttp?: boolean
  /** How host names are resolved; the system resolver (`dns.lookup`, all addresses) by default. */
  readonly resolve?: Resolver
}

export interface CheckedTarget {
  readonly url: URL
  /** The URL's host without IPv6 brackets: what goes into `Host` and the TLS server name. */
  readonly hostname: string
  readonly port: number
  /** True when the URL names an IP address rather than a host name. */
  readonly isLiteral: boolean
  /** Every address the host resolved to, each checked; connect only to these. */
  readonly addresses: readonly [ResolvedAddress, ...Array<ResolvedAddress>]
}

export type Verdict =
  | { readonly allowed: true; readonly address: ResolvedAddress }
  | { readonly allowed: false; readonly range: string }

/** Addresses that hand out cloud credentials; refused even when private targets are allowed. */
const metadataAddresses: ReadonlyArray<string> = [
  "169.254.169.254", // AWS, GCP, Azure, OpenStack, DigitalOcean...
  "169.254.170.2", // AWS ECS task metadata
  "169.254.170.23", // AWS EKS pod identity
  "100.100.100.200", // Alibaba Cloud
  "fd00:ec2::254", // AWS IPv6
  "fd00:ec2::23"
].map((a) => ipaddr.parse(a).toNormalizedString())

/** Classes that are never a webhook receiver, whatever the operator allows. */
const neverAllowed = new Set(["unspecified", "broadcast", "multicast"])

const globalUnicast = ipaddr.IPv6.parseCIDR("2000::/3")
const nat64LocalUse = ipaddr.IPv6.parseCIDR("64:ff9b:1::/48")

const lastIPv4 = (v6: ipaddr.IPv6): ipaddr.IPv4 => {
  const bytes = v6.toByteArray()
  return new ipaddr.IPv4(bytes.slice(12, 16))
}

/** The IPv4 address an IPv6 address stands for, when it embeds one that reaches IPv4 hosts. */
const embeddedIPv4 = (v6: ipaddr.IPv6): ipaddr.IPv4 | undefined => {
  switch (v6.range()) {
    case "ipv4Mapped": // ::ffff:a.b.c.d
    case "rfc6145": // ::ffff:0:a.b.c.d
      return lastIPv4(v6)
    case "rfc6052": // 64:ff9b::a.b.c.d (NAT64 well-known prefix)
      return v6.match(nat64LocalUse) ? undefined : lastIPv4(v6)
    case "6to4": { // 2002:AABB:CCDD::
      const bytes = v6.toByteArray()
      return new ipaddr.IPv4(bytes.slice(2, 6))
    }
    default:
      return undefined
  }
}

const classifyV4 = (v4: ipaddr.IPv4, allowPrivate: boolean): string | undefined => {
  if (metadataAddresses.includes(v4.toNormalizedString())) return "cloud metadata"
  const range = v4.range()
  if (range === "unicast") return undefined
  if (allowPrivate && !neverAllowed.has(range)) return undefined
  return range
}

/**
 * Whether one IP address may be connected to. The refusal names the range (`loopback`, `private`,
 * `linkLocal`, `carrierGradeNat`, `uniqueLocal`, `cloud metadata`...). IPv4-mapped, NAT64 and 6to4
 * IPv6 addresses are judged by the IPv4 address they embed.
 */
export const classify = (address: string, allowPrivate: boolean): Verdict => {
  if (!ipaddr.isValid(address)) return { allowed: false, range: "not an IP address" }
  const ip = ipaddr.parse(address)
  if (ip.kind() === "ipv4") {
    const v4 = ip as ipaddr.IPv4
    const refused = classifyV4(v4, allowPrivate)
    return refused === undefined
      ? { allowed: true, address: { address: v4.toNormalizedString(), family: 4 } }
      : { allowed: false, range: refused }
  }
  const v6 = ip as ipaddr.IPv6
  if (v6.zoneId !== undefined && !allowPrivate) return { allowed: false, range: "scoped" }
  const normalized = v6.toRFC5952String()
  if (metadataAddresses.includes(v6.toNormalizedString())) return { allowed: false, range: "cloud metadata" }
  const inner = embeddedIPv4(v6)
  if (inner !== undefined) {
    const refused = classifyV4(inner, allowPrivate)
    if (refused !== undefined) return { allowed: false, range: `${refused} (embedded IPv4 ${inner.toString()})` }
    // A mapped address is an IPv4 destination: connect to it as one.
    return v6.isIPv4MappedAddress()
      ? { allowed: true, address: { address: inner.toString(), family: 4 } }
      : { allowed: true, address: { address: normalized, family: 6 } }
  }
  const range = v6.range()
  if (range === "unicast" && v6.match(globalUnicast)) {
    return { allowed: true, address: { address: normalized, family: 6 } }
  }
  if (allowPrivate && !neverAllowed.has(range)) {
    return { allowed: true, address: { address: normalized, family: 6 } }
  }
  // Teredo (obfuscated IPv4 inside), NAT64 local-use and the IANA-reserved rest of ::/3 are refused too.
  return { allowed: false, range: range === "unicast" ? "not global unicast" : range }
}

const systemResolver: Resolver = (hostname) =>
  Dns.promises.lookup(hostname, { all: true, verbatim: true }).then((all) =>
    all.map((a) => ({ address: a.address, family: a.family === 6 ? 6 as const : 4 as const }))
  )

const refuse = (reason: RefusalReason, message: string) => new AddressRefused({ reason, message })

/** Parses the URL and checks its scheme; no I/O. */
export const parseUrl = (
  raw: string,
  options: GuardOptions
): Effect.Effect<{ readonly url: URL; readonly hostname: string; readonly port: number }, AddressRefused> =>
  Effect.suspend(() => {
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      return Effect.fail(refuse("invalid_url", "the URL does not parse"))
    }
    const plainHttpAllowed = options.allowPrivate || options.allowPlainHttp === true
    if (url.protocol !== "https:" && !(url.protocol === "http:" && plainHttpAllowed)) {
      return Effect.fail(
        refuse(
          "invalid_url",
          url.protocol === "http:" ? "only https URLs are allowed" : `the scheme ${url.protocol} is not allowed`
        )
      )
    }
    if (url.hostname === "") return Effect.fail(refuse("invalid_url", "the URL has no host"))
    const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
    const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port)
    return Effect.succeed({ url, hostname, port })
  })

export interface UrlCheck {
  readonly url: URL
  /** The URL's host without IPv6 brackets. */
  readonly hostname: string
  readonly port: number
  /** The checked address when the host is a literal IP; a host name still needs `resolveAndCheck`. */
  readonly literal: ResolvedAddress | undefined
}

/**
 * The check without I/O, for validating a URL when it is saved (webhook endpoints, media imports):
 * parses, requires https (unless private targets or plain http are allowed) and, when the host is a
 * literal IP in any spelling WHATWG accepts, refuses it if its range is refused. Sending must still
 * go through `resolveAndCheck`, since a host name can resolve anywhere.
 */
export const checkUrl = (raw: string, options: GuardOptions): Effect.Effect<UrlCheck, AddressRefused> =>
  Effect.flatMap(parseUrl(raw, options), ({ hostname, port, url }): Effect.Effect<UrlCheck, AddressRefused> => {
    if (!ipaddr.isValid(hostname)) return Effect.succeed({ url, hostname, port, literal: undefined })
    const verdict = classify(hostname, options.allowPrivate)
    return verdict.allowed
      ? Effect.succeed({ url, hostname, port, literal: verdict.address })
      : Effect.fail(refuse("refused_address", `the address ${hostname} is not allowed (${verdict.range})`))
  })

/**
 * Parses the URL, requires https (unless private targets or plain http are allowed), resolves the host
 * and refuses the target if ANY address it resolves to is refused. A literal IP is checked as it is.
 */
export const resolveAndCheck = (raw: string, options: GuardOptions): Effect.Effect<CheckedTarget, AddressRefused> =>
  Effect.gen(function*() {
    const { hostname, port, url } = yield* parseUrl(raw, options)
    const isLiteral = ipaddr.isValid(hostname)
    const candidates: ReadonlyArray<ResolvedAddress> = isLiteral
      ? [{ address: hostname, family: ipaddr.parse(hostname).kind() === "ipv6" ? 6 : 4 }]
      : yield* Effect.tryPromise({
        try: () => (options.resolve ?? systemResolver)(hostname),
        catch: () => refuse("unresolvable", `the host ${hostname} does not resolve`)
      })
    const checked: Array<ResolvedAddress> = []
    for (const candidate of candidates) {
      const verdict = classify(candidate.address, options.allowPrivate)
      if (!verdict.allowed) {
        return yield* Effect.fail(refuse(
          "refused_address",
          isLiteral
            ? `the address ${hostname} is not allowed (${verdict.range})`
            : `the host ${hostname} resolves to a refused address (${verdict.range})`
        ))
      }
      checked.push(verdict.address)
    }
    const [first, ...rest] = checked
    if (first === undefined) return yield* Effect.fail(refuse("unresolvable", `the host ${hostname} has no address`))
    return { url, hostname, port, isLiteral, addresses: [first, ...rest] }
  })

/**
 * A `lookup` for `net`/`http`/`https` options that answers with the checked addresses only, whatever
 * name it is asked for. Handles both callback shapes (`all: true` is used by Node's family autoselection).
 */
export const lookupFor = (target: CheckedTarget): Net.LookupFunction => (_hostname, options, callback) => {
  if (options.all === true) {
    callback(null, target.addresses.map((a) => ({ address: a.address, family: a.family })))
    return
  }
  const wanted = options.family === 6 || options.family === 4 ? options.family : undefined
  const pick = target.addresses.find((a) => wanted === undefined || a.family === wanted) ?? target.addresses[0]
  callback(null, pick.address, pick.family)
}

export const allowPrivateEnv = "HERALD_WEBHOOKS_ALLOW_PRIVATE"

/** The operator switch: `HERALD_WEBHOOKS_ALLOW_PRIVATE=true` (case-insensitive; anything else is off). */
export const fromEnv = (
  env: Readonly<Record<string, string | undefined>> = process.env
): { readonly allowPrivate: boolean } => ({
  allowPrivate: env[allowPrivateEnv]?.trim().toLowerCase() === "true"
})

/** What the server prints at start when the switch is on. */
export const allowPrivateWarning =
  `WARNING: ${allowPrivateEnv}=true: webhooks may target private, loopback and link-local addresses and use plain http. ` +
  "Use this only for local development or a trusted private network; cloud metadata addresses stay refused."
