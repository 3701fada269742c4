/**
 * The dashboard's files as Herald serves them (no browser): every page path answers the shell, the
 * assets answer with their types and the security headers, nothing outside the dashboard's folder is
 * reachable, and the API's unknown routes still answer the error envelope.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Dashboard from "@herald/http/Dashboard"
import * as fs from "node:fs"
import * as path from "node:path"
import * as HeraldServer from "../support/HeraldServer.js"

let server: HeraldServer.HeraldServer

beforeAll(async () => {
  server = await HeraldServer.start()
}, 120_000)
afterAll(async () => {
  await server?.stop()
})

const get = (p: string) => fetch(server.baseUrl + p)

describe("dashboard pages", () => {
  it("every page path answers the HTML shell, not cached, with a same-origin CSP", async () => {
    const shell = fs.readFileSync(path.join(Dashboard.directory(), "index.html"), "utf8")
    for (
      const p of [
        "/",
        "/sign-in",
        "/set-password?token=abc",
        "/posts",
        "/posts/3f1c2d4e-0000-4000-8000-000000000001",
        "/calendar",
        "/compose",
        "/approvals",
        "/accounts",
        "/developer",
        "/device",
        "/device?code=BCDF-GHJK"
      ]
    ) {
      const res = await get(p)
      expect(res.status, p).toBe(200)
      expect(res.headers.get("content-type"), p).toBe("text/html; charset=utf-8")
      expect(res.headers.get("cache-control"), p).toBe("no-store")
      expect(res.headers.get("content-security-policy"), p).toContain("script-src 'self'")
      expect(res.headers.get("content-security-policy"), p).toContain("frame-ancestors 'none'")
      expect(await res.text(), p).toBe(shell)
    }
  })

  it("serves each asset with its type; the shell names only local scripts and styles", async () => {
    const shell = await (await get("/sign-in")).text()
    expect(shell).not.toMatch(/(src|href)="https?:/)
    const js = await get("/dashboard/assets/app.js")
    expect(js.status).toBe(200)
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(js.headers.get("x-content-type-options")).toBe("nosniff")
    const page = await get("/dashboard/assets/pages/compose.js")
    expect(page.status).toBe(200)
    expect(await page.text()).toContain("/platform-rules")
    const css = await get("/dashboard/assets/app.css")
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8")
    expect(await css.text()).toContain(":focus-visible")
  })

  it("the sign-in page goes on only to a path of this site: hostile `next` values fall back to /posts", async () => {
    // The module the sign-in page imports, as served, evaluated here with the same WHATWG URL.
    const served = await get("/dashboard/assets/next.js")
    expect(served.status).toBe(200)
    const source = await served.text()
    const module = (await import(`data:text/javascript;base64,${Buffer.from(source).toString("base64")}`)) as {
      readonly safeNext: (next: unknown, origin: string) => string
    }
    const signInPage = await (await get("/dashboard/assets/pages/sign-in.js")).text()
    expect(signInPage).toContain("safeNext(query.get(\"next\"), location.origin)")
    const origin = server.baseUrl
    // As the page reads them: URLSearchParams decodes the query once.
    const nextOf = (query: string) => new URLSearchParams(query).get("next")
    for (
      const query of [
        "next=/%5Cevil.example/",
        "next=/%09/evil.example/",
        "next=/%0A/evil.example/",
        "next=/%0D/evil.example/",
        "next=/%00/evil.example/",
        "next=//evil.example/",
        "next=/%2F/evil.example/",
        "next=/\\/evil.example/",
        "next=/.//evil.example/",
        "next=/%2e//evil.example/",
        "next=/posts/../..//evil.example",
        "next=https://evil.example/",
        "next=http:/evil.example/",
        "next=javascript:alert(1)",
        "next=evil.example",
        "next=",
        ""
      ]
    ) {
      const landing = module.safeNext(nextOf(query), origin)
      expect([query, landing]).toEqual([query, "/posts"])
      expect(new URL(landing, origin).origin).toBe(origin)
    }
    for (
      const [query, path] of [
        ["next=%2Fcompose", "/compose"],
        ["next=/posts/3f1c2d4e-0000-4000-8000-000000000001", "/posts/3f1c2d4e-0000-4000-8000-000000000001"],
        ["next=%2Fcalendar%3Fweek%3D2026-11-23", "/calendar?week=2026-11-23"],
        ["next=/device?code=BCDF-GHJK#top", "/device?code=BCDF-GHJK#top"]
      ] as const
    ) {
      expect(module.safeNext(nextOf(query), origin)).toBe(path)
    }
  })

  it("answers 404 for anything that is not one of its files", async () => {
    for (
      const p of [
        "/dashboard/assets/nope.js",
        "/dashboard/assets/../Dashboard.ts",
        "/dashboard/assets/..%2FDashboard.ts",
        "/dashboard/assets/%2e%2e%2f%2e%2e%2fpackage.json",
        "/dashboard/assets/%E0%A4%A",
        "/dashboard/assets/index.html"
      ]
    ) {
      const res = await get(p)
      expect(res.status, p).toBe(404)
      expect(await res.text(), p).not.toContain("import")
    }
  })

  it("leaves the API's answers alone: an unknown /api/v1 route is still the envelope's 404", async () => {
    const res = await server.request("GET", "/api/v1/nope")
    expect(res.status).toBe(404)
    expect((res.json as { error: { code: string } }).error.code).toBe("not_found")
  })
})
