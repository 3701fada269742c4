/**
 * Trace export over OTLP/HTTP (`@effect/opentelemetry`'s `OtlpTracer`), opt-in through the standard
 * OpenTelemetry variables: on when `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the full URL) or
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL; traces go to `{base}/v1/traces`) is set, unless
 * `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. Also read: `OTEL_EXPORTER_OTLP[_TRACES]_PROTOCOL`
 * (`http/protobuf`, the default, or `http/json`), `OTEL_EXPORTER_OTLP[_TRACES]_HEADERS` (`key=value,...`,
 * e.g. a vendor's API key; never logged), `OTEL_SERVICE_NAME` (default `herald`),
 * `OTEL_RESOURCE_ATTRIBUTES`, and `OTEL_BSP_SCHEDULE_DELAY` / `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` (how often
 * and how many spans are sent; 5000 ms, 512).
 *
 * The spans are Effect's own (`Effect.withSpan` in the engine, the platform's server and client
 * spans). URLs in span attributes lose what may be a credential before they leave the process
 * (`SpanUrls`: query values, path segments that look like tokens), whoever set them.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as SpanUrls from "@herald/adapters/net/SpanUrls"
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"

export type Protocol = "http/protobuf" | "http/json"

export const protocols: ReadonlyArray<Protocol> = ["http/protobuf", "http/json"]

export interface Config {
  readonly url: string
  readonly protocol: Protocol
  readonly headers: Readonly<Record<string, string>>
  readonly serviceName: string
  readonly exportInterval: Duration.Duration
  readonly maxBatchSize: number
}

const read = (env: NodeJS.ProcessEnv, name: string): string | undefined => {
  const value = env[name]?.trim()
  return value === undefined || value === "" ? undefined : value
}

/** `key=value,key2=value2`, values percent-decoded (the OpenTelemetry format). */
export const parseHeaders = (raw: string | undefined): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (const pair of (raw ?? "").split(",")) {
    const at = pair.indexOf("=")
    if (at <= 0) continue
    try {
      headers[decodeURIComponent(pair.slice(0, at).trim()).toLowerCase()] = decodeURIComponent(
        pair.slice(at + 1).trim()
      )
    } catch {
      // A malformed escape: the pair is left out rather than sent garbled.
    }
  }
  return headers
}

const positive = (raw: string | undefined, fallback: number): number => {
  const n = Number(raw)
  return raw !== undefined && Number.isFinite(n) && n > 0 ? n : fallback
}

/** The export's settings from the environment; none when traces are not to be exported. */
export const configFromEnv = (env: NodeJS.ProcessEnv = process.env): Option.Option<Config> => {
  if (read(env, "OTEL_SDK_DISABLED")?.toLowerCase() === "true") return Option.none()
  if (read(env, "OTEL_TRACES_EXPORTER")?.toLowerCase() === "none") return Option.none()
  const full = read(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
  const base = read(env, "OTEL_EXPORTER_OTLP_ENDPOINT")
  const url = full ?? (base === undefined ? undefined : `${base.replace(/\/+$/, "")}/v1/traces`)
  if (url === undefined) return Option.none()
  const protocol = read(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ?? read(env, "OTEL_EXPORTER_OTLP_PROTOCOL")
  return Option.some({
    url,
    protocol: protocol === "http/json" ? "http/json" : "http/protobuf",
    headers: parseHeaders(read(env, "OTEL_EXPORTER_OTLP_TRACES_HEADERS") ?? read(env, "OTEL_EXPORTER_OTLP_HEADERS")),
    serviceName: read(env, "OTEL_SERVICE_NAME") ?? "herald",
    exportInterval: Duration.millis(positive(read(env, "OTEL_BSP_SCHEDULE_DELAY"), 5000)),
    maxBatchSize: Math.floor(positive(read(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE"), 512))
  })
}

/** Whether traces are exported (the variables above). */
export const enabled = (env: NodeJS.ProcessEnv = process.env): boolean => Option.isSome(configFromEnv(env))

const scrubAttribute = (key: string, value: unknown): unknown => {
  if (typeof value !== "string") return value
  switch (key) {
    case "url.full":
      return SpanUrls.scrubUrl(value)
    case "url.path":
      return SpanUrls.scrubPath(value)
    case "url.query":
      return SpanUrls.scrubQuery(value)
    default:
      return value
  }
}

/** `tracer` whose spans scrub URL attributes as they are set (the span itself is the exporter's). */
export const scrubbing = (tracer: Tracer.Tracer): Tracer.Tracer =>
  Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) => {
      const span = tracer.span(name, parent, context, links, startTime, kind, options)
      const set = span.attribute.bind(span)
      // Everything else (ids, status, end, events) is the exporter's span, read through the prototype.
      return Object.assign(Object.create(span) as Tracer.Span, {
        attribute: (key: string, value: unknown) => set(key, scrubAttribute(key, value))
      })
    },
    context: (f, fiber) => tracer.context(f, fiber)
  })

/** The tracer exporting to `config`, for every fiber of what it is provided to. */
export const layer = (config: Config): Layer.Layer<never> =>
  Layer.unwrapScoped(
    Effect.map(
      OtlpTracer.make({
        url: config.url,
        headers: config.headers,
        resource: { serviceName: config.serviceName },
        exportInterval: config.exportInterval,
        maxBatchSize: config.maxBatchSize
      }),
      (tracer) => Layer.setTracer(scrubbing(tracer))
    )
  ).pipe(
    Layer.provide(config.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
    Layer.provide(NodeHttpClient.layer)
  )

/** `layer` when the environment asks for export (read when built), else nothing. */
export const layerFromEnv: Layer.Layer<never> = Layer.unwrapEffect(
  Effect.sync(() => Option.match(configFromEnv(), { onNone: () => Layer.empty, onSome: layer }))
)
