/**
 * The engine's own figures (publishes, webhook deliveries, sweeps, heartbeats), recorded through
 * Effect's `Metric` API: counters, histograms and gauges held in memory by Effect's metric registry,
 * with no I/O and no dependency beyond `effect`. Whoever runs the engine decides how to export them:
 * `herald serve` renders them for Prometheus at `GET /metrics`; a host application may read
 * `Metric.unsafeSnapshot()` or bridge them to OpenTelemetry.
 *
 * Names and labels follow Prometheus conventions (`herald_` prefix, `_total` counters, `_seconds`
 * durations), and every label has a bounded set of values: platforms, outcomes, error kinds and
 * attempt numbers, never a post, destination or account id. Each family is declared once here, with
 * its labels, so an exporter can describe it before its first sample.
 *
 * Recording goes through `unsafeUpdate` with one cached label array per combination of values: Effect
 * looks a metric's hook up by that array's identity, so a sample costs a map lookup, and labels the
 * caller's fiber may carry (`Effect.tagMetrics`) never widen a family.
 */
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricLabel from "effect/MetricLabel"

/** What an exporter needs to know of a family before it has any sample. */
export interface Family {
  readonly name: string
  readonly help: string
  readonly type: "counter" | "histogram" | "gauge"
  readonly labelNames: ReadonlyArray<string>
  /** Upper bounds of a histogram's buckets (without +Inf). */
  readonly buckets?: ReadonlyArray<number>
}

/** Every family declared here, in declaration order. */
export const families: Array<Family> = []

/** A family recorded with one value per label, in `labelNames` order. */
export interface Series<L extends string> {
  readonly family: Family
  /** Adds `value` (counters), observes it (histograms) or sets it (gauges). */
  readonly record: (labels: Readonly<Record<L, string>>, value: number) => void
}

const make = <L extends string>(
  family: Family & { readonly labelNames: ReadonlyArray<L> },
  metric: { readonly unsafeUpdate: (value: number, labels: ReadonlyArray<MetricLabel.MetricLabel>) => void }
): Series<L> => {
  families.push(family)
  const cached = new Map<string, ReadonlyArray<MetricLabel.MetricLabel>>()
  const names: ReadonlyArray<L> = family.labelNames
  const labelsOf = (labels: Readonly<Record<L, string>>): ReadonlyArray<MetricLabel.MetricLabel> => {
    let key = ""
    for (const name of names) key += labels[name] + "\u0000"
    let found = cached.get(key)
    if (found === undefined) {
      found = names.map((name) => MetricLabel.make(name, labels[name]))
      cached.set(key, found)
    }
    return found
  }
  return { family, record: (labels, value) => metric.unsafeUpdate(value, labelsOf(labels)) }
}

const counter = <L extends string>(name: string, help: string, labelNames: ReadonlyArray<L>): Series<L> =>
  make({ name, help, type: "counter", labelNames }, Metric.counter(name, { description: help, incremental: true }))

const gauge = <L extends string>(name: string, help: string, labelNames: ReadonlyArray<L>): Series<L> =>
  make({ name, help, type: "gauge", labelNames }, Metric.gauge(name, { description: help }))

const histogram = <L extends string>(
  name: string,
  help: string,
  labelNames: ReadonlyArray<L>,
  buckets: ReadonlyArray<number>
): Series<L> =>
  make(
    { name, help, type: "histogram", labelNames, buckets },
    Metric.histogram(name, MetricBoundaries.fromIterable(buckets), help)
  )

/** Buckets for a call to another service, from 50 ms to the longest publish timeout. */
const callBuckets: ReadonlyArray<number> = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]

export const destinationsClaimed = counter(
  "herald_destinations_claimed_total",
  "Destinations claimed for a publish attempt by this process.",
  ["platform"]
)

export const destinationsPublished = counter(
  "herald_destinations_published_total",
  "Destinations recorded as published by this process.",
  ["platform"]
)

export const destinationsRequeued = counter(
  "herald_destinations_requeued_total",
  "Publish attempts that failed and were queued again (a later attempt follows), by error kind.",
  ["platform", "error_kind"]
)

export const destinationsFailed = counter(
  "herald_destinations_failed_total",
  "Destinations recorded as failed (no further automatic attempt), by error kind.",
  ["platform", "error_kind"]
)

export const destinationsLost = counter(
  "herald_destinations_lost_total",
  "Publish outcomes not recorded because the claim had been taken over (its lease ran out).",
  ["platform"]
)

export const publishDuration = histogram(
  "herald_publish_duration_seconds",
  "Time of one publish call to the platform (media reads included), by whether it succeeded.",
  ["platform", "outcome"],
  callBuckets
)

export const webhookDeliveries = counter(
  "herald_webhook_deliveries_total",
  "Webhook delivery attempts by outcome (delivered, retrying, dead, lost) and attempt number.",
  ["outcome", "attempt"]
)

export const webhookDeliveryDuration = histogram(
  "herald_webhook_delivery_duration_seconds",
  "Time of one webhook delivery attempt, by whether the receiver answered 2xx.",
  ["outcome"],
  callBuckets
)

export const metricsSweepRounds = counter(
  "herald_metrics_sweep_rounds_total",
  "Rounds of the post metrics sweep (likes, views) by result (ok, failed).",
  ["result"]
)

export const metricsSweepDestinations = counter(
  "herald_metrics_sweep_destinations_total",
  "Destinations whose post metrics the sweep fetched, failed to fetch or deferred (rate limit).",
  ["result"]
)

export const tokenRefreshSweeps = counter(
  "herald_token_refresh_sweeps_total",
  "Rounds of the token refresh sweep by result (ok, failed).",
  ["result"]
)

export const tokenRefreshAccounts = counter(
  "herald_token_refresh_accounts_total",
  "Accounts the token refresh sweep refreshed, found dead (reconnection needed), deferred or skipped.",
  ["result"]
)

export const heartbeats = counter(
  "herald_process_heartbeats_total",
  "Heartbeats of this process in the process table, by result (ok, failed).",
  ["result"]
)

export const lastHeartbeat = gauge(
  "herald_process_last_heartbeat_timestamp_seconds",
  "When this process last heartbeat successfully (unix seconds, database time).",
  []
)

/** `lastHeartbeat` set to `epochMillis`. */
export const heartbeatAt = (epochMillis: number): void => lastHeartbeat.record({}, epochMillis / 1000)
