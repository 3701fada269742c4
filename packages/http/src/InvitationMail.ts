/**
 * Invitation e-mails: when SMTP is configured (HERALD_SMTP_URL, HERALD_MAIL_FROM), inviting someone
 * from the dashboard also e-mails them the invitation link. The link is the dashboard's: HERALD_PUBLIC_URL
 * when set, else the origin the inviting owner or admin uses (the request's Origin, then Host). The
 * e-mail is sent while the invitation is made, so that the inviter learns at once whether it went; a
 * failure does not undo the invitation (the link is still shown, to pass on by hand).
 */
import * as SmtpMailer from "@herald/adapters/mail/SmtpMailer"
import type { Mailer, MailMessage } from "@herald/core/workflow/NotificationMail"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { mailFromEnv } from "./MailConfig.js"

export interface Sender {
  readonly mailer: Mailer["Type"]
  /** HERALD_PUBLIC_URL, when set: the origin of the links. */
  readonly publicUrl: Option.Option<string>
}

/** The invitation e-mail sender; none when SMTP is not configured. */
export class InvitationMailer extends Context.Tag("@herald/http/InvitationMailer")<
  InvitationMailer,
  Option.Option<Sender>
>() {}

/** From the environment, when the server is built; the SMTP connections close with the layer. */
export const layerFromEnv: Layer.Layer<InvitationMailer> = Layer.scoped(
  InvitationMailer,
  Effect.suspend(() => {
    const settings = mailFromEnv()
    if (Option.isNone(settings)) return Effect.succeed(Option.none())
    return SmtpMailer.make(settings.value.smtp).pipe(
      Effect.map((mailer) => Option.some({ mailer, publicUrl: settings.value.dashboardUrl })),
      Effect.orDie
    )
  })
)

export interface InvitationFacts {
  readonly to: string
  readonly organizationName: string
  readonly inviterName: string
  readonly role: string
  readonly link: string
  readonly expiresAt: DateTime.Utc
}

const roleText: Record<string, string> = {
  owner: "an owner",
  admin: "an admin",
  member: "a member"
}

/** The e-mail: who invites whom to which organization, as what, the link and until when it works. */
export const compose = (facts: InvitationFacts): MailMessage => ({
  to: facts.to,
  subject: `${facts.inviterName} invites you to ${facts.organizationName} on Herald`,
  text:
    `${facts.inviterName} invites you to join ${facts.organizationName} on Herald as ${
      roleText[facts.role] ?? facts.role
    }.\n\nTo join, open this link, choose your name and a password:\n${facts.link}\n\n` +
    `The link works once, until ${DateTime.formatIso(facts.expiresAt)} (UTC). ` +
    "If you did not expect this invitation, ignore this e-mail: nothing happens unless the link is opened."
})

/** The origin of the links: HERALD_PUBLIC_URL, else the request's Origin, else its Host over http. */
export const linkBase = (
  publicUrl: Option.Option<string>,
  headers: Readonly<Record<string, string | undefined>>
): string =>
  Option.getOrElse(
    Option.orElse(publicUrl, () => Option.fromNullable(headers["origin"])),
    () => `http://${headers["host"] ?? "127.0.0.1"}`
  ).replace(/\/+$/, "")
