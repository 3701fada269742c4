/** The role matrix covers every route behind the API-key middleware, and the roles allow what it says. */
import * as HttpApi from "@effect/platform/HttpApi"
import * as Roles from "@herald/core/access/Roles"
import { describe, expect, it } from "vitest"
import { Api } from "../src/Api.js"
import { Authentication } from "../src/Auth.js"
import * as Permissions from "../src/Permissions.js"

const authenticatedRoutes = (): Array<string> => {
  const routes: Array<string> = []
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, middleware }) => {
      if ([...middleware].some((m) => m.key === Authentication.key)) routes.push(`${endpoint.method} ${endpoint.path}`)
    }
  })
  return routes
}

describe("Permissions", () => {
  it("lists every route behind the API-key middleware, and nothing else", () => {
    const routes = authenticatedRoutes()
    expect(routes.length).toBeGreaterThan(40)
    expect(routes.filter((r) => !(r in Permissions.routes))).toEqual([])
    expect(Object.keys(Permissions.routes).filter((r) => !routes.includes(r))).toEqual([])
  })

  it("an unlisted route is for owners and admins", () => {
    expect(Permissions.actionOf("POST", "/api/v1/not-a-route")).toBe("manage_organization")
    expect(Roles.can("member", Permissions.actionOf("POST", "/api/v1/not-a-route"))).toBe(false)
  })

  it("members read, create posts, upload media, organize campaigns and use AI; the rest is for owners and admins", () => {
    const member = Roles.actions.filter((a) => Roles.can("member", a))
    expect(member).toEqual(["read", "create_posts", "change_post", "upload_media", "organize_campaigns", "use_ai"])
    for (const role of ["owner", "admin"] as const) expect(Roles.actions.every((a) => Roles.can(role, a))).toBe(true)
    const memberRoutes = Object.entries(Permissions.routes).filter(([, a]) => Roles.can("member", a)).map(([r]) => r)
    for (const route of memberRoutes) expect(route).not.toMatch(/webhooks|connect|reconnect|DELETE \/api\/v1\/accounts/)
  })
})
