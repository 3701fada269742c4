/**
 * Notification e-mails through `SmtpMailer` to a real SMTP server running in the test (`smtp-server`),
 * over the SQL stores on SQLite: a due e-mail is sent once with the notification's subject and text; a
 * 4xx refusal is retried after the first delay and a 5xx one given up; the SMTP password never appears
 * in what is logged.
 */
import { describe, expect, it } from "@effect/vitest"
import { UserStore } from "@herald/core/access/UserStore"
import { PostStore } from "@herald/core/posts/PostStore"
import { EventStore } from "@herald/core/webhooks/EventStore"
import { NotificationStore } from "@herald/core/workflow/Notification"
import * as NotificationMail from "@herald/core/workflow/NotificationMail"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import { randomUUID } from "node:crypto"
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"
import * as SmtpMailer from "../../src/mail/SmtpMailer.js"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import * as SqlStores from "../../src/sql/SqlStores.js"
import { at, event, givenOrganization, post, T0, user } from "../contract/Fixtures.js"
import { sqlite } from "../support/TestDatabases.js"

interface Received {
  readonly to: ReadonlyArray<string>
  readonly raw: string
}

/** An SMTP server on a free port that answers each message with `reply(n)` (n counts messages from 1). */
const smtpServer = (reply: (n: number) => undefined | { readonly code: number; readonly message: string }) =>
  Effect.acquireRelease(
    Effect.async<{ readonly port: number; readonly received: Array<Received>; readonly server: SMTPServer }>(
      (resume) => {
        const received: Array<Received> = []
        let n = 0
        const server = new SMTPServer({
          authOptional: true,
          disabledCommands: ["STARTTLS"],
          logger: false,
          onAuth: (_auth, _session, callback) => callback(null, { user: "herald" }),
          onData: (stream, session, callback) => {
            const chunks: Array<Buffer> = []
            stream.on("data", (c: Buffer) => chunks.push(c))
            stream.on("end", () => {
              n += 1
              const answer = reply(n)
              if (answer !== undefined) {
                callback(Object.assign(new Error(answer.message), { responseCode: answer.code }))
                return
              }
              received.push({
                to: session.envelope.rcptTo.map((r) => r.address),
                raw: Buffer.concat(chunks).toString("utf8")
              })
              callback()
            })
          }
        })
        server.listen(
          0,
          "127.0.0.1",
          () => resume(Effect.succeed({ port: (server.server.address() as AddressInfo).port, received, server }))
        )
      }
    ),
    (s) => Effect.promise(() => new Promise<void>((resolve) => s.server.close(() => resolve())))
  )

const stores = SqlStores.layer.pipe(
  Layer.provide(Layer.succeed(IdGenerator, IdGenerator.of({ uuid: Effect.sync(() => randomUUID()) }))),
  Layer.provideMerge(sqlite)
)

/** An owner, a member's draft, and its approval requested: one e-mail due, to the owner. */
const givenDueEmail = Effect.gen(function*() {
  const org = yield* givenOrganization
  const owner = user(org.id, { email: `owner-${randomUUID().slice(0, 6)}@acme.test`, role: "owner" })
  const member = user(org.id, { email: `member-${randomUUID().slice(0, 6)}@acme.test`, role: "member" })
  yield* (yield* UserStore).insert(owner)
  yield* (yield* UserStore).insert(member)
  const draft = post(org.id, {
    content: "Winter menu",
    isDraft: true,
    createdStatus: "draft",
    createdBy: Option.some(member.id)
  })
  yield* (yield* PostStore).insert({ post: draft, destinations: [] })
  yield* (yield* EventStore).append([
    event(org.id, {
      type: "post.approval_requested",
      data: { post_id: draft.id, requested_by: { user_id: member.id } },
      createdAt: at(T0)
    })
  ])
  return { owner, draft }
})

const password = "s3cret-smtp-pa55"

const withMailer = (port: number) =>
  Effect.provide(
    SmtpMailer.layer({
      url: Redacted.make(`smtp://herald:${password}@127.0.0.1:${port}`),
      from: "Herald <herald@example.test>"
    })
  )

const capturedLogs = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ annotations, message }) => {
    lines.push(JSON.stringify({ message, annotations: Object.fromEntries(annotations) }))
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

describe("notification e-mails over SMTP", () => {
  it.scoped("a due e-mail is sent once, with the notification's subject and text and a link to the post", () =>
    Effect.gen(function*() {
      const smtp = yield* smtpServer(() => undefined)
      yield* TestClock.setTime(T0 + 1000)
      const { draft, owner } = yield* givenDueEmail
      const sent = yield* NotificationMail.sendDue({ dashboardUrl: Option.some("https://herald.example.com/") }).pipe(
        withMailer(smtp.port)
      )
      expect(sent).toBe(1)
      expect(smtp.received.map((r) => r.to)).toEqual([[owner.email]])
      const raw = smtp.received[0]!.raw.replace(/=\r?\n/g, "")
      expect(raw).toMatch(/^Subject: =\?UTF-8\?Q\?Approval_requested/m)
      expect(raw).toContain("A draft waits for your review")
      expect(raw).toContain(`https://herald.example.com/posts/${draft.id}`)
      expect(yield* NotificationMail.sendDue({ dashboardUrl: Option.none() }).pipe(withMailer(smtp.port))).toBe(0)
      expect(smtp.received).toHaveLength(1)
    }).pipe(Effect.provide(stores)))

  it.scoped("a 4xx refusal is retried after a minute; a 5xx one is given up; the SMTP password is never logged", () =>
    Effect.gen(function*() {
      const smtp = yield* smtpServer((
        n
      ) => (n === 1 ? { code: 451, message: "Try again later" } : { code: 550, message: "No such user" }))
      const logs = capturedLogs()
      yield* TestClock.setTime(T0 + 1000)
      const { owner } = yield* givenDueEmail
      const store = yield* NotificationStore
      const pass = NotificationMail.sendDue({ dashboardUrl: Option.none() }).pipe(
        withMailer(smtp.port),
        Effect.provide(logs.layer)
      )
      expect(yield* pass).toBe(1)
      // Not due again before a minute has passed.
      yield* TestClock.setTime(T0 + 1000 + 59_000)
      expect(yield* pass).toBe(0)
      yield* TestClock.setTime(T0 + 1000 + 60_000)
      expect(yield* pass).toBe(1)
      yield* TestClock.setTime(T0 + 1000 + 10_000_000)
      expect(yield* pass).toBe(0)
      expect(smtp.received).toEqual([])
      expect(logs.lines.filter((l) => l.includes("Notification e-mail failed"))).toHaveLength(2)
      expect(logs.lines.join("\n")).toContain("451")
      expect(logs.lines.join("\n")).toContain("given up")
      expect(logs.lines.join("\n")).not.toContain(password)
      const [n] = yield* store.list(owner.id, { limit: 1, unreadOnly: false })
      expect(n?.kind).toBe("approval_requested")
    }).pipe(Effect.provide(stores)))
})
