/**
 * The team rules over real HTTP against `herald serve` (SQLite and, where it answers, Postgres):
 * invitations by link with a role (single-use, only their hash stored), joining through one (signed in
 * at once), seats per plan counting open invitations, role changes and removal with the owner rules
 * (an admin manages members and admins only; the last owner stays), and the codes of every refusal
 * with nothing stored changed.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Admin from "@herald/http/Admin"
import { createHash } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import * as HeraldServer from "../support/HeraldServer.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] Team conformance on Postgres skipped: ${pg.reason}`)

interface Failure {
  readonly error: { readonly code: string; readonly message: string; readonly details?: Record<string, unknown> }
}
interface Person {
  readonly cookie: string
  readonly csrf: string
}
interface UserView {
  readonly id: string
  readonly email: string
  readonly name: string
  readonly role: string
}
interface Invited {
  readonly invitation: {
    readonly id: string
    readonly email: string
    readonly role: string
    readonly expires_at: string
  }
  readonly path: string
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const errorOf = (r: HeraldServer.Response) => (r.json as Failure).error

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("team on $label", ({ postgres, skip }) => {
  let server: HeraldServer.HeraldServer
  let owner: Person

  const as = (person: Person | null, method: string, path: string, payload?: unknown) =>
    server.request(method, `/dashboard/api${path}`, {
      key: null,
      ...(payload === undefined ? {} : { body: payload }),
      ...(person === null ? {} : { headers: { cookie: person.cookie, "x-csrf-token": person.csrf } })
    })

  const personOf = (res: HeraldServer.Response): Person => {
    const cookie = /herald_session=[0-9a-f]{64}/.exec(res.headers.get("set-cookie") ?? "")![0]
    return { cookie, csrf: (res.json as { csrf_token: string }).csrf_token }
  }

  const signIn = async (email: string, password: string): Promise<Person> => {
    const res = await as(null, "POST", "/session", { email, password })
    if (res.status !== 200) throw new Error(`sign-in: ${res.text}`)
    return personOf(res)
  }

  const tokenOf = (invited: Invited) => invited.path.split("token=")[1]!

  /** Invites `email` as `role` by `by` and joins through the link; the new person, signed in. */
  const join = async (by: Person, email: string, role: string): Promise<Person> => {
    const invited = await as(by, "POST", "/invitations", { email, role })
    expect(invited.status, invited.text).toBe(201)
    const joined = await as(null, "POST", "/invitations/accept", {
      token: tokenOf(invited.json as Invited),
      name: email.split("@")[0],
      password: `${role} password 123`
    })
    expect(joined.status, joined.text).toBe(201)
    return personOf(joined)
  }

  const users = async () => ((await as(owner, "GET", "/users")).json as { data: ReadonlyArray<UserView> }).data
  const userNamed = async (email: string) => (await users()).find((u) => u.email === email)!
  const invitationRows = () =>
    server.withStore(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<
          { email: string; role: string; token_hash: string }
        >`SELECT email, role, token_hash FROM invitations ORDER BY email`)
    )

  beforeAll(async () => {
    if (skip) return
    server = await HeraldServer.start({
      postgres,
      env: { HERALD_PUBLIC_URL: "", HERALD_SIGN_IN_LIMIT_PER_MINUTE: "1000" }
    })
    let token: string | undefined
    for (let i = 0; i < 100 && token === undefined; i++) {
      token = /HERALD_OWNER_LINK=\S+\/set-password\?token=([0-9a-f]{64})/.exec(server.output())?.[1]
      if (token === undefined) await sleep(50)
    }
    const set = await as(null, "POST", "/password", { token, password: "owner password 123" })
    if (set.status !== 204) throw new Error(set.text)
    owner = await signIn("owner@localhost", "owner password 123")
  }, 180_000)
  afterAll(async () => {
    await server?.stop()
  })

  /**
   * Sets the organization's plan from another connection and waits until the server answers with it:
   * on Postgres the server may serve its cached organization for up to 250 ms (ReadCache).
   */
  const setPlan = async (plan: "growth" | "scale") => {
    await server.withStore(Admin.setPlan(server.orgId, plan))
    await expect.poll(async () => {
      const me = await server.request("GET", "/api/v1/me")
      return (me.json as { data: { organization: { plan: string } } }).data.organization.plan
    }, { timeout: 10_000, interval: 100 }).toBe(plan)
  }

  it.skipIf(skip)(
    "an invitation link is previewed, used once to join with its role (signed in at once), and only its hash is stored",
    async () => {
      await setPlan("scale")
      const invited = await as(owner, "POST", "/invitations", { email: "  Ada@Example.com ", role: "admin" })
      expect(invited.status, invited.text).toBe(201)
      const body = invited.json as Invited
      expect(body.invitation).toMatchObject({ email: "ada@example.com", role: "admin" })
      expect(body.path).toMatch(/^\/join\?token=[0-9a-f]{64}$/)
      const token = tokenOf(body)
      const stored = (await invitationRows()).find((r) => r.email === "ada@example.com")!
      expect(stored.token_hash).toBe(createHash("sha256").update(token).digest("hex"))
      expect(JSON.stringify(await invitationRows())).not.toContain(token)

      const listed = (await as(owner, "GET", "/invitations")).json as { data: ReadonlyArray<{ email: string }> }
      expect(listed.data.map((i) => i.email)).toContain("ada@example.com")

      const preview = await as(null, "POST", "/invitations/preview", { token })
      expect(preview.status, preview.text).toBe(200)
      expect(preview.json).toMatchObject({
        organization: { name: expect.any(String) },
        email: "ada@example.com",
        role: "admin"
      })

      // A short password is refused under its field; the link stays usable.
      const weak = await as(null, "POST", "/invitations/accept", { token, name: "Ada", password: "short" })
      expect([weak.status, errorOf(weak).code, errorOf(weak).details?.["field"]]).toEqual([
        400,
        "validation_error",
        "password"
      ])
      const joined = await as(null, "POST", "/invitations/accept", {
        token,
        name: "Ada Lovelace",
        password: "ada password 123"
      })
      expect(joined.status, joined.text).toBe(201)
      expect((joined.json as { user: UserView }).user).toMatchObject({
        email: "ada@example.com",
        name: "Ada Lovelace",
        role: "admin"
      })
      const ada = personOf(joined)
      expect((await as(ada, "GET", "/session")).status).toBe(200)
      expect((await signIn("ada@example.com", "ada password 123")).cookie).toMatch(/herald_session=/)

      const again = await as(null, "POST", "/invitations/accept", { token, name: "Eve", password: "eve password 1234" })
      expect([again.status, errorOf(again).code]).toEqual([400, "invalid_token"])
      expect((await as(null, "POST", "/invitations/preview", { token })).status).toBe(400)
      expect((await invitationRows()).some((r) => r.email === "ada@example.com")).toBe(false)
    }
  )

  it.skipIf(skip)(
    "a member may not invite, list invitations, change roles or remove anyone: 403 insufficient_scope, nothing changed",
    async () => {
      await setPlan("scale")
      const member = await join(owner, "mia@example.com", "member")
      const before = { users: await users(), invitations: await invitationRows() }
      const refused = (r: HeraldServer.Response, what: string) => {
        expect([what, r.status, errorOf(r)?.code, errorOf(r)?.details?.["role"]]).toEqual([
          what,
          403,
          "insufficient_scope",
          "member"
        ])
      }
      refused(await as(member, "POST", "/invitations", { email: "x@example.com", role: "member" }), "invites")
      refused(await as(member, "GET", "/invitations"), "lists invitations")
      const ownerUser = await userNamed("owner@localhost")
      refused(await as(member, "PATCH", `/users/${ownerUser.id}`, { role: "member" }), "demotes the owner")
      const mia = await userNamed("mia@example.com")
      refused(await as(member, "PATCH", `/users/${mia.id}`, { role: "admin" }), "promotes themself")
      refused(await as(member, "DELETE", `/users/${ownerUser.id}`), "removes the owner")
      expect(await users()).toEqual(before.users)
      expect(await invitationRows()).toEqual(before.invitations)
    }
  )

  it.skipIf(skip)(
    "an admin manages members and admins but not owners: no owner invitations, no owner changes or removal",
    async () => {
      await setPlan("scale")
      const admin = await join(owner, "adam@example.com", "admin")
      const ownerUser = await userNamed("owner@localhost")
      const ownerOnly = (r: HeraldServer.Response, what: string) => {
        expect([what, r.status, errorOf(r)?.code, errorOf(r)?.details?.["required_role"]]).toEqual([
          what,
          403,
          "insufficient_scope",
          "owner"
        ])
      }
      ownerOnly(await as(admin, "POST", "/invitations", { email: "o2@example.com", role: "owner" }), "invites an owner")
      ownerOnly(await as(admin, "PATCH", `/users/${ownerUser.id}`, { role: "admin" }), "demotes the owner")
      ownerOnly(await as(admin, "DELETE", `/users/${ownerUser.id}`), "removes the owner")
      expect((await userNamed("owner@localhost")).role).toBe("owner")

      const member = await join(admin, "max@example.com", "member")
      const max = await userNamed("max@example.com")
      ownerOnly(await as(admin, "PATCH", `/users/${max.id}`, { role: "owner" }), "makes an owner")
      const promoted = await as(admin, "PATCH", `/users/${max.id}`, { role: "admin" })
      expect([promoted.status, (promoted.json as UserView).role]).toEqual([200, "admin"])
      const removed = await as(admin, "DELETE", `/users/${max.id}`)
      expect(removed.status, removed.text).toBe(204)
      // The removed user's session ends at once, and their password no longer signs in.
      expect((await as(member, "GET", "/session")).status).toBe(401)
      expect((await as(null, "POST", "/session", { email: "max@example.com", password: "member password 123" })).status)
        .toBe(401)
      expect((await users()).some((u) => u.email === "max@example.com")).toBe(false)
    }
  )

  it.skipIf(skip)(
    "the last owner can neither lose the role nor be removed; with a second owner, either may step down",
    async () => {
      await setPlan("scale")
      const ownerUser = await userNamed("owner@localhost")
      const lastOwner = (r: HeraldServer.Response, what: string) => {
        expect([what, r.status, errorOf(r)?.code, errorOf(r)?.details?.["reason"]]).toEqual([
          what,
          400,
          "validation_error",
          "last_owner"
        ])
      }
      lastOwner(await as(owner, "PATCH", `/users/${ownerUser.id}`, { role: "admin" }), "steps down")
      lastOwner(await as(owner, "DELETE", `/users/${ownerUser.id}`), "removes themself")
      expect((await userNamed("owner@localhost")).role).toBe("owner")

      const second = await join(owner, "olga@example.com", "owner")
      const olga = await userNamed("olga@example.com")
      expect(olga.role).toBe("owner")
      const stepDown = await as(second, "PATCH", `/users/${olga.id}`, { role: "member" })
      expect([stepDown.status, (stepDown.json as UserView).role]).toEqual([200, "member"])
      lastOwner(await as(owner, "PATCH", `/users/${ownerUser.id}`, { role: "member" }), "steps down again")
    }
  )

  it.skipIf(skip)(
    "seats per plan count users and open invitations: 400 limit_reached; a re-invitation replaces its link; withdrawing frees the seat",
    async () => {
      // Growth has 3 seats: the owner and one other user leave exactly one free.
      await setPlan("growth")
      for (const u of (await users()).filter((u) => u.email !== "owner@localhost").slice(1)) {
        expect((await as(owner, "DELETE", `/users/${u.id}`)).status).toBe(204)
      }
      expect((await users()).length).toBe(2)
      const first = await as(owner, "POST", "/invitations", { email: "seat@example.com", role: "member" })
      expect(first.status, first.text).toBe(201)
      const again = await as(owner, "POST", "/invitations", { email: "seat@example.com", role: "admin" })
      expect(again.status, again.text).toBe(201)
      // The first link no longer works; the second one holds the seat.
      expect((await as(null, "POST", "/invitations/preview", { token: tokenOf(first.json as Invited) })).status).toBe(
        400
      )
      const over = await as(owner, "POST", "/invitations", { email: "one-too-many@example.com", role: "member" })
      expect([over.status, errorOf(over).code, errorOf(over).details]).toEqual([
        400,
        "limit_reached",
        { limit: 3, used: 3, plan: "growth" }
      ])
      expect((await invitationRows()).map((r) => r.email)).not.toContain("one-too-many@example.com")
      const withdrawn = await as(owner, "DELETE", `/invitations/${(again.json as Invited).invitation.id}`)
      expect(withdrawn.status, withdrawn.text).toBe(204)
      expect((await as(null, "POST", "/invitations/preview", { token: tokenOf(again.json as Invited) })).status).toBe(
        400
      )
      expect((await as(owner, "POST", "/invitations", { email: "one-too-many@example.com", role: "member" })).status)
        .toBe(201)
    }
  )

  it.skipIf(skip)(
    "comments on a draft go between its author and the reviewers, each side notified; other members may not read them",
    async () => {
      await setPlan("scale")
      const author = await join(owner, "cora@example.com", "member")
      const bystander = await join(owner, "ben@example.com", "member")
      const created = await server.request("POST", "/api/v1/posts", {
        key: null,
        body: { content: "Holiday hours", draft: true },
        headers: { cookie: author.cookie, "x-csrf-token": author.csrf }
      })
      expect(created.status, created.text).toBe(201)
      const postId = (created.json as { data: { id: string } }).data.id
      const unread = async (person: Person) =>
        ((await as(person, "GET", "/notifications?unread=true")).json as {
          data: ReadonlyArray<{ kind: string; title: string; link: string }>
        }).data
          .filter((n) => n.kind === "comment")

      const fromAuthor = await as(author, "POST", `/posts/${postId}/comments`, { body: "  Is the date right?  " })
      expect(fromAuthor.status, fromAuthor.text).toBe(201)
      expect(fromAuthor.json).toMatchObject({ post_id: postId, author_name: "cora", body: "Is the date right?" })
      const toOwner = await unread(owner)
      expect(toOwner.map((n) => [n.title, n.link])).toEqual([["cora commented on “Holiday hours”", `/posts/${postId}`]])
      expect(await unread(author)).toEqual([])

      const fromOwner = await as(owner, "POST", `/posts/${postId}/comments`, { body: "Yes, the 24th." })
      expect(fromOwner.status, fromOwner.text).toBe(201)
      expect((await unread(author)).map((n) => n.title)).toEqual([
        expect.stringMatching(/ commented on “Holiday hours”$/)
      ])
      const thread = (await as(author, "GET", `/posts/${postId}/comments`)).json as {
        data: ReadonlyArray<{ body: string }>
      }
      expect(thread.data.map((c) => c.body)).toEqual(["Is the date right?", "Yes, the 24th."])

      const refusedRead = await as(bystander, "GET", `/posts/${postId}/comments`)
      expect([refusedRead.status, errorOf(refusedRead).code]).toEqual([403, "insufficient_scope"])
      const refusedWrite = await as(bystander, "POST", `/posts/${postId}/comments`, { body: "me too" })
      expect([refusedWrite.status, errorOf(refusedWrite).code]).toEqual([403, "insufficient_scope"])
      const empty = await as(author, "POST", `/posts/${postId}/comments`, { body: "   " })
      expect([empty.status, errorOf(empty).code, errorOf(empty).details?.["field"]]).toEqual([
        400,
        "validation_error",
        "body"
      ])
      const unknown = await as(owner, "GET", "/posts/00000000-0000-4000-8000-000000000000/comments")
      expect([unknown.status, errorOf(unknown).code]).toEqual([404, "not_found"])
      expect(((await as(owner, "GET", `/posts/${postId}/comments`)).json as { data: ReadonlyArray<unknown> }).data)
        .toHaveLength(2)
    }
  )

  it.skipIf(skip)("bad input is refused with the spec's envelope and stores nothing", async () => {
    await setPlan("scale")
    const before = await invitationRows()
    const badEmail = await as(owner, "POST", "/invitations", { email: "not an email", role: "member" })
    expect([badEmail.status, errorOf(badEmail).code, errorOf(badEmail).details?.["field"]]).toEqual([
      400,
      "validation_error",
      "email"
    ])
    const badRole = await as(owner, "POST", "/invitations", { email: "r@example.com", role: "superuser" })
    expect([badRole.status, errorOf(badRole).code]).toEqual([400, "validation_error"])
    const taken = await as(owner, "POST", "/invitations", { email: "owner@localhost", role: "member" })
    expect([taken.status, errorOf(taken).details?.["reason"]]).toEqual([400, "email_taken"])
    expect(await invitationRows()).toEqual(before)
    const unknownUser = await as(owner, "PATCH", "/users/not-a-uuid", { role: "admin" })
    expect([unknownUser.status, errorOf(unknownUser).code]).toEqual([404, "not_found"])
    const unknownInvitation = await as(owner, "DELETE", "/invitations/00000000-0000-4000-8000-000000000000")
    expect([unknownInvitation.status, errorOf(unknownInvitation).code]).toEqual([404, "not_found"])
    const unknownToken = await as(null, "POST", "/invitations/accept", {
      token: "f".repeat(64),
      name: "X",
      password: "long enough password"
    })
    expect([unknownToken.status, errorOf(unknownToken).code]).toEqual([400, "invalid_token"])
  })
})
