/**
 * A subscription's activity and a delivery's attempt ladder (spec: Webhooks, Retry policy).
 */
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"

/** Consecutive failed deliveries that disable a subscription. */
export const disableAfter = 20

/** Attempts a delivery gets; after the last one fails it is dead. */
export const maxAttempts = 6

/** The delay before attempt n (index n - 1): attempt 1 immediate, then 30 s, 2 min, 10 min, 1 h, 6 h. */
export const ladder: ReadonlyArray<Duration.Duration> = [
  Duration.zero,
  Duration.seconds(30),
  Duration.minutes(2),
  Duration.minutes(10),
  Duration.hours(1),
  Duration.hours(6)
]

/** How long after failed attempt `failedAttempt` the next one is due; None when the delivery is dead. */
export const nextAttemptDelay = (failedAttempt: number): Option.Option<Duration.Duration> =>
  failedAttempt >= 1 && failedAttempt < maxAttempts ? Option.some(ladder[failedAttempt]!) : Option.none()

export interface Activity {
  readonly isActive: boolean
  readonly consecutiveFailures: number
}

/** A failed delivery counts; the 20th in a row disables the subscription. The counter is kept. */
export const afterDeliveryFailure = (a: Activity): Activity => {
  const consecutiveFailures = a.consecutiveFailures + 1
  return { isActive: a.isActive && consecutiveFailures < disableAfter, consecutiveFailures }
}

export const afterDeliverySuccess = (a: Activity): Activity => ({ isActive: a.isActive, consecutiveFailures: 0 })

/** `PATCH is_active: true` re-enables and resets the counter; `false` disables and keeps it. */
export const setActive = (a: Activity, isActive: boolean): Activity =>
  isActive
    ? { isActive: true, consecutiveFailures: 0 }
    : { isActive: false, consecutiveFailures: a.consecutiveFailures }
