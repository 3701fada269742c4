/**
 * The e-mail sender's settings from the environment, shared by the notification e-mails (the worker's
 * outbox) and the invitation e-mails (sent by the server when someone is invited).
 */
import type * as SmtpMailer from "@herald/adapters/mail/SmtpMailer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

/** The e-mail sender's settings, when HERALD_SMTP_URL is set. */
export interface MailSettings {
  readonly smtp: SmtpMailer.Settings
  readonly dashboardUrl: Option.Option<string>
}

/**
 * From the environment: HERALD_SMTP_URL (`smtp://user:pass@host:587` or `smtps://…`; unset: no e-mail),
 * HERALD_MAIL_FROM (the From address, required with it) and HERALD_PUBLIC_URL (links in the e-mails).
 */
export const mailFromEnv = (env: NodeJS.ProcessEnv = process.env): Option.Option<MailSettings> => {
  const url = env.HERALD_SMTP_URL?.trim() ?? ""
  if (url === "") return Option.none()
  const from = env.HERALD_MAIL_FROM?.trim() ?? ""
  if (from === "") {
    throw new Error("HERALD_MAIL_FROM must be set with HERALD_SMTP_URL (the From address of notification e-mails)")
  }
  const publicUrl = env.HERALD_PUBLIC_URL?.trim() ?? ""
  return Option.some({
    smtp: { url: Redacted.make(url), from },
    dashboardUrl: publicUrl === "" ? Option.none() : Option.some(publicUrl)
  })
}
