/**
 * The `Mailer` over SMTP with nodemailer (STARTTLS when offered, `smtps://` for implicit TLS). The SMTP
 * URL may hold a password: it is never logged, and errors are reported by nodemailer's code and the
 * server's reply only. A 5xx reply (recipient refused, message rejected) is permanent; anything else
 * (connection, timeouts, 4xx) may be retried.
 */
import { Mailer, MailError } from "@herald/core/workflow/NotificationMail"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import nodemailer from "nodemailer"

export interface Settings {
  /** `smtp://user:pass@host:port` or `smtps://…` (HERALD_SMTP_URL). */
  readonly url: Redacted.Redacted<string>
  /** The From address, e.g. `Herald <herald@example.com>` (HERALD_MAIL_FROM). */
  readonly from: string
}

const failure = (cause: unknown): MailError => {
  const e: Record<string, unknown> = typeof cause === "object" && cause !== null ? { ...cause } : {}
  const status = typeof e["responseCode"] === "number" ? e["responseCode"] : undefined
  const parts = [
    typeof e["code"] === "string" ? e["code"] : "SMTP error",
    status === undefined ? undefined : String(status),
    typeof e["response"] === "string" ? e["response"].slice(0, 200) : undefined
  ].filter((p) => p !== undefined)
  return new MailError({ message: parts.join(" "), permanent: status !== undefined && status >= 500 })
}

/**
 * The connection of an SMTP URL: `smtps:` is TLS from the start (port 465 by default), `smtp:` plain
 * with STARTTLS when the server offers it (port 587 by default); user and password when given.
 */
export const connectionOf = (url: Redacted.Redacted<string>) => {
  const parsed = new URL(Redacted.value(url))
  if (parsed.protocol !== "smtp:" && parsed.protocol !== "smtps:") {
    throw new Error("HERALD_SMTP_URL must start with smtp:// or smtps://")
  }
  const secure = parsed.protocol === "smtps:"
  return {
    host: parsed.hostname,
    port: parsed.port === "" ? (secure ? 465 : 587) : Number(parsed.port),
    secure,
    ...(parsed.username === ""
      ? {}
      : { auth: { user: decodeURIComponent(parsed.username), pass: decodeURIComponent(parsed.password) } })
  }
}

/** A sender for the settings; its connections close with the scope. */
export const make = (settings: Settings) =>
  Effect.gen(function*() {
    const connection = yield* Effect.try({
      try: () => connectionOf(settings.url),
      // The URL's text is never repeated: it may hold the password.
      catch: () => new MailError({ message: "HERALD_SMTP_URL is not an smtp:// or smtps:// URL", permanent: true })
    })
    const transport = yield* Effect.acquireRelease(
      Effect.sync(() =>
        nodemailer.createTransport({
          ...connection,
          // Short waits: a stuck server holds one e-mail's lease, not the whole sender.
          connectionTimeout: 10_000,
          greetingTimeout: 10_000,
          socketTimeout: 30_000
        })
      ),
      (t) => Effect.sync(() => t.close())
    )
    return Mailer.of({
      send: (message) =>
        Effect.tryPromise({
          try: () =>
            transport.sendMail({ from: settings.from, to: message.to, subject: message.subject, text: message.text }),
          catch: failure
        }).pipe(Effect.asVoid)
    })
  })

export const layer = (settings: Settings): Layer.Layer<Mailer, MailError> => Layer.scoped(Mailer, make(settings))
