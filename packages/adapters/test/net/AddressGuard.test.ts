import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import type * as Net from "node:net"
import * as AddressGuard from "../../src/net/AddressGuard.js"

const refusedRange = (address: string, allowPrivate = false): string => {
  const verdict = AddressGuard.classify(address, allowPrivate)
  if (verdict.allowed) throw new Error(`${address} was allowed`)
  return verdict.range
}

const publicResolver = (map: Record<string, ReadonlyArray<string>>): AddressGuard.Resolver => (hostname) => {
  const addresses = map[hostname]
  if (addresses === undefined) return Promise.reject(new Error("ENOTFOUND"))
  return Promise.resolve(
    addresses.map((address) => ({ address, family: address.includes(":") ? 6 as const : 4 as const }))
  )
}

const check = (url: string, options: AddressGuard.GuardOptions) =>
  Effect.either(AddressGuard.resolveAndCheck(url, options))

describe("AddressGuard.classify", () => {
  it.each([
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["169.254.1.1", "linkLocal"],
    ["169.254.169.254", "cloud metadata"],
    ["100.64.0.1", "carrierGradeNat"],
    ["100.127.255.254", "carrierGradeNat"],
    ["0.0.0.0", "unspecified"],
    ["255.255.255.255", "broadcast"],
    ["224.0.0.1", "multicast"],
    ["240.0.0.1", "reserved"],
    ["192.0.2.1", "reserved"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fe80::1", "linkLocal"],
    ["fc00::1", "uniqueLocal"],
    ["fd12:3456::1", "uniqueLocal"],
    ["ff02::1", "multicast"],
    ["fd00:ec2::254", "cloud metadata"],
    ["::ffff:127.0.0.1", "loopback (embedded IPv4 127.0.0.1)"],
    ["::ffff:10.0.0.1", "private (embedded IPv4 10.0.0.1)"],
    ["::ffff:169.254.169.254", "cloud metadata (embedded IPv4 169.254.169.254)"],
    ["64:ff9b::7f00:1", "loopback (embedded IPv4 127.0.0.1)"],
    ["64:ff9b::a9fe:a9fe", "cloud metadata (embedded IPv4 169.254.169.254)"],
    ["2002:7f00:1::", "loopback (embedded IPv4 127.0.0.1)"],
    ["::7f00:1", "not global unicast"],
    ["2001:db8::1", "reserved"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "teredo"]
  ])("refuses %s (%s)", (address, range) => {
    expect(refusedRange(address)).toBe(range)
  })

  it.each([
    ["8.8.8.8", "8.8.8.8", 4],
    ["1.1.1.1", "1.1.1.1", 4],
    ["2606:4700:4700::1111", "2606:4700:4700::1111", 6],
    ["::ffff:8.8.8.8", "8.8.8.8", 4],
    ["64:ff9b::808:808", "64:ff9b::808:808", 6]
  ])("allows the public address %s", (address, connectTo, family) => {
    expect(AddressGuard.classify(address, false)).toEqual({ allowed: true, address: { address: connectTo, family } })
  })

  it("with allowPrivate, private and local addresses pass but metadata, unspecified and multicast do not", () => {
    for (
      const address of ["127.0.0.1", "10.0.0.1", "192.168.0.10", "::1", "fd12::1", "::ffff:127.0.0.1", "100.64.0.1"]
    ) {
      expect(AddressGuard.classify(address, true).allowed).toBe(true)
    }
    expect(refusedRange("169.254.169.254", true)).toBe("cloud metadata")
    expect(refusedRange("::ffff:169.254.169.254", true)).toBe("cloud metadata (embedded IPv4 169.254.169.254)")
    expect(refusedRange("0.0.0.0", true)).toBe("unspecified")
    expect(refusedRange("224.0.0.1", true)).toBe("multicast")
  })

  it.prop("every address of 10/8, 127/8, 192.168/16 and 172.16/12 is refused, as IPv4 and as mapped IPv6", [
    FastCheck.constantFrom([10, 0, 8], [127, 0, 8], [192, 168, 16], [172, 16, 12]),
    FastCheck.integer({ min: 0, max: 2 ** 32 - 1 })
  ], ([[a, b, bits], r]) => {
    const base = ((a << 24) | (b << 16)) >>> 0
    const host = r & (2 ** (32 - bits) - 1)
    const n = (base | host) >>> 0
    const dotted = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".")
    return !AddressGuard.classify(dotted, false).allowed && !AddressGuard.classify(`::ffff:${dotted}`, false).allowed
  })
})

describe("AddressGuard.resolveAndCheck", () => {
  it.effect("what reaches the guard: WHATWG URL parsing normalizes decimal, octal and hex IPv4 forms", () =>
    Effect.gen(function*() {
      for (const url of ["http://2130706433/", "http://0177.0.0.1/", "http://0x7f.1/", "http://127.1/"]) {
        const target = yield* AddressGuard.resolveAndCheck(url, { allowPrivate: true })
        expect(target.hostname).toBe("127.0.0.1")
        expect(target.isLiteral).toBe(true)
        expect(target.addresses).toEqual([{ address: "127.0.0.1", family: 4 }])
      }
      const mapped = yield* AddressGuard.resolveAndCheck("http://[::ffff:127.0.0.1]:8080/", { allowPrivate: true })
      expect(mapped.hostname).toBe("::ffff:7f00:1")
      expect(mapped.addresses).toEqual([{ address: "127.0.0.1", family: 4 }])
      expect(mapped.port).toBe(8080)
    }))

  it.effect("refuses literal private and loopback targets in every spelling, naming the host only", () =>
    Effect.gen(function*() {
      for (
        const url of [
          "https://127.0.0.1/hook?token=s3cr3t",
          "https://2130706433/hook?token=s3cr3t",
          "https://0177.0.0.1/hook?token=s3cr3t",
          "https://0x7f.1/hook?token=s3cr3t",
          "https://[::ffff:127.0.0.1]/hook?token=s3cr3t",
          "https://[::1]/hook?token=s3cr3t",
          "https://10.0.0.5/hook?token=s3cr3t",
          "https://169.254.169.254/latest/meta-data?token=s3cr3t",
          "https://[64:ff9b::a9fe:a9fe]/hook?token=s3cr3t"
        ]
      ) {
        const result = yield* check(url, { allowPrivate: false })
        expect(Either.isLeft(result), url).toBe(true)
        if (Either.isLeft(result)) {
          expect(result.left.reason).toBe("refused_address")
          expect(result.left.message).not.toContain("s3cr3t")
          expect(result.left.message).not.toContain("/hook")
        }
      }
    }))

  it.effect("refuses a host name when ANY of its addresses is refused", () =>
    Effect.gen(function*() {
      const resolve = publicResolver({
        "mixed.example": ["93.184.215.14", "10.0.0.7"],
        "public.example": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"]
      })
      const mixed = yield* check("https://mixed.example/x", { allowPrivate: false, resolve })
      expect(Either.isLeft(mixed) && mixed.left.reason).toBe("refused_address")
      expect(Either.isLeft(mixed) && mixed.left.message).toContain("private")
      const ok = yield* AddressGuard.resolveAndCheck("https://public.example/x", { allowPrivate: false, resolve })
      expect(ok.isLiteral).toBe(false)
      expect(ok.port).toBe(443)
      expect(ok.addresses).toEqual([
        { address: "93.184.215.14", family: 4 },
        { address: "2606:2800:21f:cb07:6820:80da:af6b:8b2c", family: 6 }
      ])
    }))

  it.effect("localhost (system resolver) is refused", () =>
    Effect.gen(function*() {
      const result = yield* check("https://localhost/hook", { allowPrivate: false })
      expect(Either.isLeft(result) && result.left.reason).toBe("refused_address")
      expect(Either.isLeft(result) && result.left.message).toContain("loopback")
    }))

  it.effect("requires https unless private targets or plain http are allowed; other schemes never", () =>
    Effect.gen(function*() {
      const resolve = publicResolver({ "public.example": ["93.184.215.14"] })
      const http = yield* check("http://public.example/x", { allowPrivate: false, resolve })
      expect(Either.isLeft(http) && http.left.reason).toBe("invalid_url")
      expect(Either.isRight(yield* check("http://public.example/x", { allowPrivate: true, resolve }))).toBe(true)
      expect(
        Either.isRight(yield* check("http://public.example/x", { allowPrivate: false, allowPlainHttp: true, resolve }))
      )
        .toBe(true)
      for (const url of ["ftp://public.example/x", "file:///etc/passwd", "gopher://public.example/", "not a url"]) {
        const result = yield* check(url, { allowPrivate: true, resolve })
        expect(Either.isLeft(result) && result.left.reason, url).toBe("invalid_url")
      }
    }))

  it.effect("a host that does not resolve is unresolvable", () =>
    Effect.gen(function*() {
      const result = yield* check("https://nowhere.example/", { allowPrivate: false, resolve: publicResolver({}) })
      expect(Either.isLeft(result) && result.left.reason).toBe("unresolvable")
    }))
})

describe("AddressGuard.lookupFor", () => {
  it("answers every lookup with the checked addresses, in both callback shapes", () => {
    const target: AddressGuard.CheckedTarget = {
      url: new URL("https://public.example/"),
      hostname: "public.example",
      port: 443,
      isLiteral: false,
      addresses: [{ address: "93.184.215.14", family: 4 }, { address: "2606:2800::1", family: 6 }]
    }
    const lookup = AddressGuard.lookupFor(target)
    const calls: Array<unknown> = []
    const callback = ((error: unknown, address: unknown, family?: unknown) => {
      calls.push([error, address, family])
    }) as Parameters<Net.LookupFunction>[2]
    lookup("evil.example", { all: true }, callback)
    lookup("evil.example", {}, callback)
    lookup("evil.example", { family: 6 }, callback)
    expect(calls).toEqual([
      [null, [{ address: "93.184.215.14", family: 4 }, { address: "2606:2800::1", family: 6 }], undefined],
      [null, "93.184.215.14", 4],
      [null, "2606:2800::1", 6]
    ])
  })
})

describe("AddressGuard.checkUrl (no I/O)", () => {
  it.effect("refuses literal refused addresses in every spelling and plain http; leaves host names to resolveAndCheck", () =>
    Effect.gen(function*() {
      for (
        const url of [
          "https://127.0.0.1/h?token=s3cr3t",
          "https://2130706433/h",
          "https://0177.0.0.1/h",
          "https://0x7f.1/h",
          "https://[::ffff:127.0.0.1]/h",
          "https://192.168.1.20/h",
          "https://169.254.169.254/h"
        ]
      ) {
        const result = yield* Effect.either(AddressGuard.checkUrl(url, { allowPrivate: false }))
        expect(Either.isLeft(result) && result.left.reason, url).toBe("refused_address")
        expect(Either.isLeft(result) && result.left.message, url).not.toContain("s3cr3t")
      }
      const http = yield* Effect.either(AddressGuard.checkUrl("http://example.com/h", { allowPrivate: false }))
      expect(Either.isLeft(http) && http.left.reason).toBe("invalid_url")
      const named = yield* AddressGuard.checkUrl("https://example.com:8443/h", { allowPrivate: false })
      expect(named).toMatchObject({ hostname: "example.com", port: 8443, literal: undefined })
      const literal = yield* AddressGuard.checkUrl("https://[::ffff:8.8.8.8]/h", { allowPrivate: false })
      expect(literal.literal).toEqual({ address: "8.8.8.8", family: 4 })
      const local = yield* AddressGuard.checkUrl("http://0x7f.1:9000/h", { allowPrivate: true })
      expect(local.literal).toEqual({ address: "127.0.0.1", family: 4 })
    }))
})

describe("AddressGuard.fromEnv", () => {
  it("only HERALD_WEBHOOKS_ALLOW_PRIVATE=true turns the switch on", () => {
    expect(AddressGuard.fromEnv({ HERALD_WEBHOOKS_ALLOW_PRIVATE: "true" })).toEqual({ allowPrivate: true })
    expect(AddressGuard.fromEnv({ HERALD_WEBHOOKS_ALLOW_PRIVATE: " TRUE " })).toEqual({ allowPrivate: true })
    for (const value of [undefined, "", "false", "1", "yes"]) {
      expect(AddressGuard.fromEnv({ HERALD_WEBHOOKS_ALLOW_PRIVATE: value }).allowPrivate, String(value)).toBe(false)
    }
    expect(AddressGuard.allowPrivateWarning).toContain("HERALD_WEBHOOKS_ALLOW_PRIVATE=true")
  })
})
