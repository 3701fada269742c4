/**
 * Herald in-process for hosts that do not use Effect: `createHerald(config)` answers every use case of
 * the `Herald` service as a Promise, `events.subscribe` hears the outbox, and `close()` stops
 * gracefully (subscriptions first, then the dispatcher: a round in flight finishes before the store
 * closes, and a claim a crash leaves behind is released when its lease ends).
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import { DomainError } from "@herald/core/kernel/Errors"
import * as ErrorCatalogue from "./ErrorCatalogue.js"
import { Herald, type HeraldConfig, type HeraldService, layer } from "./Herald.js"
import * as HeraldEvents from "./HeraldEvents.js"

export type { HeraldConfig } from "./Herald.js"
export type { Cursor, EventPayload } from "./HeraldEvents.js"

/** A failed call: `code` is the API's error code (`validation_error`, `not_found`, …). */
export class HeraldError extends Error {
  override readonly name = "HeraldError"
  constructor(
    readonly code: string,
    message: string,
    readonly details: Readonly<Record<string, unknown>> | undefined = undefined,
    /** The HTTP status the API answers this error with, when the error names one. */
    readonly status: number | undefined = undefined
  ) {
    super(message)
  }
}

type Promised<T> = T extends (...args: infer P) => Effect.Effect<infer A, infer _E, infer _R> ?
  (...args: P) => Promise<A>
  : T extends object ? { readonly [K in keyof T]: Promised<T[K]> }
  : T

export interface Subscription {
  /** Stops polling; resolves once a handler in progress has returned. */
  readonly unsubscribe: () => Promise<void>
  /** Where the subscription is; persist it and pass it as `from` to resume after a restart. */
  readonly cursor: () => HeraldEvents.Cursor
}

export interface SubscribeOptions {
  /** `now` (default): events from now on; `beginning`: every event kept; or a saved cursor. */
  readonly from?: "now" | "beginning" | HeraldEvents.Cursor
  /** Time between polls when idle, in milliseconds (default 250). */
  readonly pollMillis?: number
  /** Called when the handler throws; the events are delivered again on the next poll. */
  readonly onError?: (error: unknown) => void
}

export type HeraldClient = Promised<Omit<HeraldService, "events" | "organizationId">> & {
  readonly organizationId: string
  readonly events: {
    readonly subscribe: (
      types: ReadonlyArray<string> | "*",
      handler: (event: HeraldEvents.EventPayload) => unknown,
      options?: SubscribeOptions
    ) => Promise<Subscription>
  }
  /** Stops subscriptions and the dispatcher, then closes the store. */
  readonly close: () => Promise<void>
}

export const toHeraldError = (cause: Cause.Cause<unknown>): HeraldError => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure) && failure.value instanceof DomainError) {
    const e = failure.value
    return new HeraldError(e.code, e.message, e.details, ErrorCatalogue.statusOf(e))
  }
  if (Option.isSome(failure)) {
    const e = failure.value as { code?: unknown; message?: unknown; details?: unknown; status?: unknown }
    if (typeof e === "object" && e !== null && typeof e.code === "string") {
      return new HeraldError(
        e.code,
        typeof e.message === "string" ? e.message : e.code,
        e.details as Record<string, unknown> | undefined,
        typeof e.status === "number" ? e.status : undefined
      )
    }
  }
  return new HeraldError("internal_error", "Herald failed unexpectedly", { cause: Cause.pretty(cause) }, 500)
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export const createHerald = async (config: HeraldConfig = {}): Promise<HeraldClient> => {
  const runtime = ManagedRuntime.make(layer(config))
  const call = async <A>(self: Effect.Effect<A, unknown, Herald>): Promise<A> => {
    const exit = await runtime.runPromiseExit(self)
    if (Exit.isSuccess(exit)) return exit.value
    throw toHeraldError(exit.cause)
  }
  const service = await call(Herald).catch(async (e) => {
    await runtime.dispose()
    throw e
  })

  const promised = (value: unknown): unknown =>
    typeof value === "function"
      ? (...args: Array<unknown>) => call((value as (...a: Array<unknown>) => Effect.Effect<unknown, unknown>)(...args))
      : typeof value === "object" && value !== null
      ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, promised(v)]))
      : value

  const subscriptions = new Set<Subscription>()

  const subscribe = async (
    types: ReadonlyArray<string> | "*",
    handler: (event: HeraldEvents.EventPayload) => unknown,
    options: SubscribeOptions = {}
  ): Promise<Subscription> => {
    let cursor = options.from === undefined || options.from === "now"
      ? await call(service.events.latest())
      : options.from === "beginning"
      ? HeraldEvents.beginning
      : options.from
    let stopped = false
    const pollMillis = options.pollMillis ?? 250
    const loop = (async () => {
      while (!stopped) {
        let next: { events: ReadonlyArray<HeraldEvents.EventPayload>; cursor: HeraldEvents.Cursor }
        try {
          next = await call(service.events.poll(cursor, types === "*" ? {} : { types }))
        } catch (error) {
          options.onError?.(error)
          await sleep(pollMillis)
          continue
        }
        let failed = false
        for (const event of next.events) {
          if (stopped) return
          try {
            await handler(event)
          } catch (error) {
            // At least once: the batch is read again from the old cursor.
            options.onError?.(error)
            failed = true
            break
          }
        }
        if (!failed) cursor = next.cursor
        if (next.events.length === 0 || failed) await sleep(pollMillis)
      }
    })()
    const subscription: Subscription = {
      unsubscribe: async () => {
        stopped = true
        subscriptions.delete(subscription)
        await loop
      },
      cursor: () => cursor
    }
    subscriptions.add(subscription)
    return subscription
  }

  let closing: Promise<void> | undefined
  const { events: _events, organizationId, ...useCases } = service
  return {
    ...(promised(useCases) as Promised<Omit<HeraldService, "events" | "organizationId">>),
    organizationId,
    events: { subscribe },
    close: () => {
      closing ??= (async () => {
        await Promise.all([...subscriptions].map((s) => s.unsubscribe()))
        await runtime.dispose()
      })()
      return closing
    }
  }
}
