/**
 * The engine's Effect metrics (`EngineMetrics`) on a prom-client registry: each family becomes a
 * prom-client metric of its type whose samples are read from Effect's metric registry at every
 * scrape. Counters and gauges are prom-client's own, refilled by their `collect` hook; a histogram's
 * buckets cannot be set through prom-client's API, so a histogram family is a `Histogram` whose
 * output is the Effect histogram's state (cumulative buckets, sum, count) in prom-client's shape.
 */
import type { Family } from "@herald/core/kernel/EngineMetrics"
import * as Metric from "effect/Metric"
import type * as MetricPair from "effect/MetricPair"
import * as MetricState from "effect/MetricState"
import * as Prometheus from "prom-client"

type Labels = Record<string, string>

/** The samples of the family named `name`, with their labels, read now. */
const pairsOf = (name: string): Array<{ readonly labels: Labels; readonly pair: MetricPair.MetricPair.Untyped }> =>
  Metric.unsafeSnapshot()
    .filter((pair) => pair.metricKey.name === name)
    .map((pair) => ({
      labels: Object.fromEntries(pair.metricKey.tags.map((tag) => [tag.key, tag.value])),
      pair
    }))

type HistogramOutput = Awaited<ReturnType<Prometheus.Histogram<string>["get"]>>

/**
 * prom-client's declarations type a metric's `type` as a numeric enum that its JavaScript neither
 * exports nor uses: the value it renders is the text.
 */
const histogramType = "histogram" as unknown as Prometheus.MetricType

/** A histogram family whose samples are the Effect histogram's state. */
class EffectHistogram extends Prometheus.Histogram<string> {
  constructor(private readonly family: Family, registry: Prometheus.Registry) {
    super({
      name: family.name,
      help: family.help,
      labelNames: [...family.labelNames],
      buckets: [...(family.buckets ?? [])],
      registers: [registry]
    })
  }

  private read(): HistogramOutput {
    const values: HistogramOutput["values"] = []
    const name = this.family.name
    for (const { labels, pair } of pairsOf(name)) {
      const state = pair.metricState
      if (!MetricState.isHistogramState(state)) continue
      for (const [bound, cumulative] of state.buckets) {
        values.push({
          labels: { ...labels, le: bound === Number.POSITIVE_INFINITY ? "+Inf" : bound },
          value: cumulative,
          metricName: `${name}_bucket`
        })
      }
      values.push({ labels, value: state.sum, metricName: `${name}_sum` })
      values.push({ labels, value: state.count, metricName: `${name}_count` })
    }
    return {
      name,
      help: this.family.help,
      type: histogramType,
      values,
      aggregator: "sum",
      collect: () => {}
    }
  }

  override get(): Promise<HistogramOutput> {
    return Promise.resolve(this.read())
  }

  /** What the registry renders as text (prom-client calls it instead of `get` when present). */
  getForPromString(): Promise<HistogramOutput> {
    return Promise.resolve(this.read())
  }
}

/** Registers every family on `registry`. */
export const register = (registry: Prometheus.Registry, families: ReadonlyArray<Family>): void => {
  for (const family of families) {
    const base = { name: family.name, help: family.help, labelNames: [...family.labelNames], registers: [registry] }
    switch (family.type) {
      case "counter":
        new Prometheus.Counter({
          ...base,
          collect() {
            this.reset()
            for (const { labels, pair } of pairsOf(family.name)) {
              if (MetricState.isCounterState(pair.metricState)) this.inc(labels, Number(pair.metricState.count))
            }
          }
        })
        break
      case "gauge":
        new Prometheus.Gauge({
          ...base,
          collect() {
            this.reset()
            for (const { labels, pair } of pairsOf(family.name)) {
              if (MetricState.isGaugeState(pair.metricState)) this.set(labels, Number(pair.metricState.value))
            }
          }
        })
        break
      case "histogram":
        new EffectHistogram(family, registry)
        break
    }
  }
}
