/**
 * The e-mail copy of each notification, when a mail sender is configured: sent in the background,
 * off every request's path, from the notifications' own store (the outbox): due e-mails are taken
 * under a lease (a process that stops mid-send leaves them to another), sent, and marked sent; a
 * failure is retried after 1 minute, 5 minutes, 30 minutes and 2 hours, then given up (the in-app
 * notification stays). A notification older than a day is never e-mailed, so a sender configured
 * later does not send the backlog.
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { NotificationStore, type PendingEmail } from "./Notification.js"

export class MailError extends Schema.TaggedError<MailError>()("MailError", {
  /** What went wrong, safe to log (never a credential). */
  message: Schema.String,
  /** True when sending again cannot help (e.g. the server refused the recipient for good). */
  permanent: Schema.Boolean
}) {}

export interface MailMessage {
  readonly to: string
  readonly subject: string
  readonly text: string
}

/** Sends one plain-text e-mail (an adapter over SMTP). */
export class Mailer extends Context.Tag("@herald/core/workflow/Mailer")<Mailer, {
  readonly send: (message: MailMessage) => Effect.Effect<void, MailError>
}>() {}

/** Waits after the 1st, 2nd, 3rd and 4th failed attempt; the 5th failure gives up. */
export const retryDelaysMillis: ReadonlyArray<number> = [60_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000]

export const maxAgeMillis = 24 * 3_600_000

export interface Options {
  /** The dashboard's origin for links in the e-mails (HERALD_PUBLIC_URL); none leaves the links out. */
  readonly dashboardUrl: Option.Option<string>
  /** How long a taken e-mail is this sender's (default 2 minutes: longer than one send may take). */
  readonly leaseMillis?: number
  /** How many e-mails one pass takes (default 20). */
  readonly batch?: number
  /** The pause between passes that found nothing (default 2 seconds). */
  readonly idleMillis?: number
}

/** The e-mail of a notification: its title as the subject, its text and a link to it. */
export const compose = (pending: PendingEmail, dashboardUrl: Option.Option<string>): MailMessage => {
  const n = pending.notification
  const link = Option.match(n.postId, { onNone: () => "/accounts", onSome: (id) => `/posts/${id}` })
  const open = Option.match(dashboardUrl, {
    onNone: () => "Open Herald's dashboard to see it.",
    onSome: (base) => `Open it in Herald: ${base.replace(/\/+$/, "")}${link}`
  })
  return {
    to: pending.email,
    subject: n.title,
    text: `${n.body}\n\n${open}\n\nYou get this e-mail because you are notified of this in Herald. ` +
      "The same notification is in the dashboard's Notifications."
  }
}

/** One pass: takes the e-mails due now and sends them, one after another; returns how many it took. */
export const sendDue = (options: Options) =>
  Effect.gen(function*() {
    const store = yield* NotificationStore
    const mailer = yield* Mailer
    const now = yield* DateTime.now
    const due = yield* store.claimEmails({
      now,
      createdAfter: DateTime.unsafeMake(DateTime.toEpochMillis(now) - maxAgeMillis),
      limit: options.batch ?? 20,
      leaseMillis: options.leaseMillis ?? 120_000
    })
    for (const pending of due) {
      const sent = yield* mailer.send(compose(pending, options.dashboardUrl)).pipe(Effect.either)
      const at = yield* DateTime.now
      if (sent._tag === "Right") {
        yield* store.emailSent(pending.notification.id, at)
        continue
      }
      const delay = retryDelaysMillis[pending.attempts - 1]
      const giveUp = sent.left.permanent || delay === undefined
      yield* Effect.logWarning("Notification e-mail failed").pipe(
        Effect.annotateLogs({
          notification_id: pending.notification.id,
          attempts: pending.attempts,
          reason: sent.left.message,
          outcome: giveUp ? "given up" : "retried later"
        })
      )
      yield* store.emailFailed(
        pending.notification.id,
        giveUp ? Option.none() : Option.some(DateTime.unsafeMake(DateTime.toEpochMillis(at) + delay))
      )
    }
    return due.length
  })

/** Sends due e-mails for as long as the scope lives; a failing pass is logged and tried again. */
export const run = (options: Options) =>
  Effect.gen(function*() {
    const idle = Duration.millis(options.idleMillis ?? 2_000)
    while (true) {
      const taken = yield* sendDue(options).pipe(
        Effect.catchAllCause((cause) => Effect.as(Effect.logError("Notification e-mails: a pass failed", cause), 0))
      )
      if (taken === 0) yield* Effect.sleep(idle)
    }
  })
