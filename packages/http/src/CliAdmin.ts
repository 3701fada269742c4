/**
 * The `herald` administration subcommands: keys, organizations, users, device approvals and the
 * posting queue, each run against the store with its services (`runAdmin`).
 */
import * as ApiKey from "@herald/core/access/ApiKey"
import { ApiKeyStore } from "@herald/core/access/ApiKeyStore"
import * as Organization from "@herald/core/access/Organization"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import { UserStore } from "@herald/core/access/UserStore"
import { AccountId } from "@herald/core/kernel/Ids"
import * as QueuePolicy from "@herald/core/workflow/QueuePolicy"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Admin from "./Admin.js"
import { databaseConfig, dataDir, env, list, oneOf, quietLogger, UsageError, type Values } from "./CliArgs.js"
import * as RateLimit from "./RateLimit.js"
import * as Server from "./Server.js"

const plan = (raw: string) => oneOf(Organization.Plan.literals, raw, "plan")
const subscriptionStatus = (raw: string) => oneOf(Organization.SubscriptionStatus.literals, raw, "status")

const iso = (value: Option.Option<DateTime.Utc>): string =>
  Option.match(value, { onNone: () => "-", onSome: DateTime.formatIso })

const keysCreate = (values: Values) => {
  const scopes = values.scopes === undefined
    ? undefined
    : list(values.scopes).map((s) => oneOf(ApiKey.Scope.literals, s, "scope"))
  const accountIds = values.accounts === undefined
    ? undefined
    : list(values.accounts).map((s) => {
      const n = Number(s)
      if (!Schema.is(AccountId)(n)) throw new UsageError(`account id must be a positive integer: ${s}`)
      return n
    })
  const expiresAt = values.expires === undefined ? undefined : Option.getOrUndefined(DateTime.make(values.expires))
  if (values.expires !== undefined && expiresAt === undefined) {
    throw new UsageError(`--expires must be an ISO 8601 instant: ${values.expires}`)
  }
  return Effect.gen(function*() {
    const org = yield* Admin.resolveOrganization(values.org)
    const { token } = yield* Admin.createKey({
      organizationId: org.id,
      name: values.name,
      scopes,
      accountIds,
      expiresAt: expiresAt === undefined ? undefined : DateTime.toUtc(expiresAt)
    })
    yield* Console.log(token)
  })
}

const keysList = (values: Values) =>
  Effect.gen(function*() {
    const orgId = values.org === undefined ? Option.none() : Option.some((yield* Admin.findOrganization(values.org)).id)
    const keys = yield* (yield* ApiKeyStore).list(orgId)
    const now = yield* DateTime.now
    for (const key of keys) {
      yield* Console.log([
        key.id,
        key.hint + "…",
        ApiKey.keyState(key, now),
        key.scopes.join(","),
        Option.match(key.accountIds, { onNone: () => "all-accounts", onSome: (ids) => `accounts:${ids.join(",")}` }),
        `expires:${iso(key.expiresAt)}`,
        `org:${key.organizationId}`,
        JSON.stringify(key.name)
      ].join("\t"))
    }
  })

const role = (raw: string) => oneOf(Organization.Role.literals, raw, "role")

/** Where a printed password link points: HERALD_PUBLIC_URL, else this host on PORT (8080). */
const linkBase = (): string => env("HERALD_PUBLIC_URL") ?? `http://127.0.0.1:${env("PORT") ?? "8080"}`

const printPasswordLink = (email: string, token: string) =>
  Effect.zipRight(
    Console.error(`herald: ${email} sets a password within 24 hours at the link below (shown once)`),
    Console.log(setPasswordLink(linkBase(), token))
  )

const usersList = (values: Values) =>
  Effect.gen(function*() {
    const orgId = values.org === undefined ? Option.none() : Option.some((yield* Admin.findOrganization(values.org)).id)
    for (const user of yield* (yield* UserStore).list(orgId)) {
      yield* Console.log(
        [user.id, user.email, user.role, `org:${user.organizationId}`, JSON.stringify(user.name)].join("\t")
      )
    }
  })

const orgsList = Effect.gen(function*() {
  for (const org of yield* (yield* OrganizationStore).list) {
    yield* Console.log(
      [org.id, org.plan, org.subscriptionStatus, `trial_ends:${iso(org.trialEndsAt)}`, JSON.stringify(org.name)].join(
        "\t"
      )
    )
  }
})

const queueShow = (values: Values) =>
  Effect.gen(function*() {
    const view = yield* Admin.showQueue(values.org)
    if (Option.isNone(view.queue)) {
      yield* Console.log("no queue (set one with: herald queue set --timezone ZONE --slots \"mon-fri 09:00\")")
      return
    }
    const queue = view.queue.value
    yield* Console.log(`timezone\t${queue.timezone}`)
    yield* Console.log(`slots\t${QueuePolicy.formatSlots(queue.openings) || "(none)"}`)
    for (const entry of view.forecast) {
      yield* Console.log(
        `next\t${entry.position}\t${DateTime.formatIsoOffset(entry.local)}\t${DateTime.formatIso(entry.occurrence.at)}`
      )
    }
  })

export const runAdmin = <A, E>(
  values: Values,
  program: Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof Server.services>>>
): Promise<number> =>
  Effect.runPromiseExit(
    program.pipe(
      Effect.provide(
        Server.services({ database: databaseConfig(values), rateLimits: RateLimit.defaults, dataDir: dataDir(values) })
      ),
      Effect.provide(quietLogger),
      Logger.withMinimumLogLevel(LogLevel.Warning)
    )
  ).then((exit) => {
    if (Exit.isSuccess(exit)) return 0
    const failure = Option.getOrUndefined(Cause.failureOption(exit.cause))
    process.stderr.write(
      `herald: ${failure instanceof Admin.AdminError ? failure.message : Cause.pretty(exit.cause)}\n`
    )
    return 1
  })

/** The dashboard page where a one-time token sets a password. */
export const setPasswordLink = (base: string, token: string): string =>
  `${base.replace(/\/+$/, "")}/set-password?token=${token}`

/**
 * Runs `herald <command> <sub> ...` when it is an administration subcommand; `undefined` when the
 * command is not one of them (or its subcommand is unknown), so the caller reports the usage.
 */
export const adminCommand = (
  command: string,
  sub: string | undefined,
  rest: ReadonlyArray<string>,
  values: Values
): Promise<number> | undefined => {
  switch (command) {
    case "keys":
      switch (sub) {
        case "create":
          return runAdmin(values, keysCreate(values))
        case "list":
          return runAdmin(values, keysList(values))
        case "revoke":
          if (rest[0] === undefined) throw new UsageError("keys revoke needs a key id")
          return runAdmin(values, Effect.zipRight(Admin.revokeKey(rest[0]), Console.error("herald: revoked")))
      }
      break
    case "orgs":
      switch (sub) {
        case "create": {
          if (rest[0] === undefined) throw new UsageError("orgs create needs a NAME")
          const name = rest[0]
          return runAdmin(
            values,
            Effect.flatMap(
              Admin.createOrganization({
                name,
                plan: values.plan === undefined ? undefined : plan(values.plan),
                status: values.status === undefined ? undefined : subscriptionStatus(values.status)
              }),
              (org) => Console.log(org.id)
            )
          )
        }
        case "list":
          return runAdmin(values, orgsList)
        case "set-plan": {
          const [id, planName] = rest
          if (id === undefined || planName === undefined) throw new UsageError("orgs set-plan needs ID and PLAN")
          const nextPlan = plan(planName)
          const nextStatus = values.status === undefined ? undefined : subscriptionStatus(values.status)
          return runAdmin(
            values,
            Effect.flatMap(
              Admin.setPlan(id, nextPlan, nextStatus),
              (org) => Console.error(`herald: ${org.id} is on plan ${org.plan}, status ${org.subscriptionStatus}`)
            )
          )
        }
      }
      break
    case "users":
      switch (sub) {
        case "create": {
          if (rest[0] === undefined) throw new UsageError("users create needs an EMAIL")
          const input = {
            email: rest[0],
            role: values.role === undefined ? "member" as const : role(values.role),
            org: values.org,
            name: values.name
          }
          return runAdmin(
            values,
            Effect.flatMap(
              Admin.createUser(input),
              ({ passwordToken, user }) =>
                Effect.zipRight(
                  Console.error(`herald: created ${user.role} ${user.email} (${user.id})`),
                  printPasswordLink(user.email, passwordToken)
                )
            )
          )
        }
        case "list":
          return runAdmin(values, usersList(values))
        case "set-role": {
          const [who, roleName] = rest
          if (who === undefined || roleName === undefined) throw new UsageError("users set-role needs USER and ROLE")
          const next = role(roleName)
          return runAdmin(
            values,
            Effect.flatMap(
              Admin.setUserRole(who, next),
              (user) => Console.error(`herald: ${user.email} is now ${user.role}`)
            )
          )
        }
        case "reset-password": {
          if (rest[0] === undefined) throw new UsageError("users reset-password needs USER (an id or an email)")
          return runAdmin(
            values,
            Effect.flatMap(
              Admin.resetPassword(rest[0]),
              ({ passwordToken, user }) => printPasswordLink(user.email, passwordToken)
            )
          )
        }
      }
      break
    case "device": {
      const code = rest[0]
      if ((sub === "approve" || sub === "deny") && code === undefined) {
        throw new UsageError(`device ${sub} needs the CODE the device shows`)
      }
      switch (sub) {
        case "approve":
          return runAdmin(
            values,
            Effect.flatMap(Admin.approveDevice(code!, values.org), (done) =>
              Console.error(
                `herald: approved ${done.userCode} for organization ${done.organization.id}; ` +
                  "the device receives its key on its next poll"
              ))
          )
        case "deny":
          return runAdmin(
            values,
            Effect.flatMap(Admin.denyDevice(code!), (done) => Console.error(`herald: denied ${done.userCode}`))
          )
      }
      break
    }
    case "queue":
      switch (sub) {
        case "set": {
          if (values.timezone === undefined || values.slots === undefined) {
            throw new UsageError("queue set needs --timezone ZONE and --slots \"mon-fri 09:00,12:30;sat 10:00\"")
          }
          const input = { org: values.org, timezone: values.timezone, slots: values.slots }
          return runAdmin(
            values,
            Effect.flatMap(
              Admin.setQueue(input),
              (q) =>
                Console.error(
                  `herald: queue of ${q.organizationId} set: ${q.timezone} ${
                    QueuePolicy.formatSlots(q.openings) || "(no openings)"
                  }`
                )
            )
          )
        }
        case "show":
          return runAdmin(values, queueShow(values))
      }
      break
  }
  return undefined
}
