/**
 * The dispatcher's options (batch size, concurrency, lease, poll interval, deadlines) and their
 * defaults, resolved once per run.
 */
import * as Duration from "effect/Duration"
import * as ClaimSize from "./ClaimSize.js"
import * as Processes from "../kernel/Processes.js"

export interface Options {
  /** Identifies this worker in leases (e.g. host:pid:uuid). */
  readonly workerId: string
  /**
   * The most destinations one round claims; default 500. A round claims `minBatchSize` when the queue
   * is quiet and doubles its claim, up to this, while every claim comes back full (`ClaimSize`).
   */
  readonly batchSize?: number
  /** The smallest claim; default 50 (or the batch size when that is smaller). */
  readonly minBatchSize?: number
  /**
   * Publishes of one round in flight at once; default the batch size. While a backlog drains, up to
   * 4 rounds overlap (the next claims while the last publishes and records), so up to 4 times this.
   */
  readonly concurrency?: number
  /**
   * How long a claim stays exclusive without renewal; default 30 seconds. Claims in flight are renewed
   * every `renewEvery`, so a publish may last as long as its own timeout.
   */
  readonly leaseFor?: Duration.DurationInput
  /** How often leases in flight are renewed; default 5 seconds (at most a third of the lease). */
  readonly renewEvery?: Duration.DurationInput
  /** A process whose heartbeat is older than this is dead; default `Processes.deadAfter` (20 s). */
  readonly deadAfter?: Duration.DurationInput
  /** How long the platform may take to say whether an abandoned attempt reached it; default 10 s. */
  readonly lookupTimeout?: Duration.DurationInput
  /** Default publish timeout when the client names none; default 60 seconds. */
  readonly publishTimeout?: Duration.DurationInput
  /**
   * The longest the loop sleeps without looking at the store, default 1 second: other processes may
   * have inserted work or died holding leases. Work due later is woken for at its due instant.
   */
  readonly pollInterval?: Duration.DurationInput
}

export interface Resolved {
  readonly workerId: string
  readonly batchSize: number
  readonly claimSize: ClaimSize.Bounds
  readonly concurrency: number
  readonly leaseFor: Duration.Duration
  readonly renewEvery: Duration.Duration
  readonly deadAfter: Duration.Duration
  readonly lookupTimeout: Duration.Duration
  readonly publishTimeout: Duration.Duration
  readonly pollInterval: Duration.Duration
}

export const resolve = (options: Options): Resolved => {
  const batchSize = Math.max(1, options.batchSize ?? 500)
  const minBatchSize = Math.min(batchSize, Math.max(1, options.minBatchSize ?? 50))
  const leaseFor = Duration.decode(options.leaseFor ?? "30 seconds")
  const renewEvery = Duration.min(
    Duration.decode(options.renewEvery ?? "5 seconds"),
    Duration.millis(Math.max(1, Math.floor(Duration.toMillis(leaseFor) / 3)))
  )
  return {
    workerId: options.workerId,
    batchSize,
    claimSize: { min: minBatchSize, max: batchSize },
    concurrency: Math.max(1, options.concurrency ?? batchSize),
    leaseFor,
    renewEvery,
    deadAfter: Duration.decode(options.deadAfter ?? Processes.deadAfter),
    lookupTimeout: Duration.decode(options.lookupTimeout ?? "10 seconds"),
    publishTimeout: Duration.decode(options.publishTimeout ?? "60 seconds"),
    pollInterval: Duration.decode(options.pollInterval ?? "1 second")
  }
}
