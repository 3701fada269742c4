/**
 * The web dashboard's pages and static assets, served by Herald itself at `/` (no CDN, no bundler):
 * every page path answers the same HTML shell (`dashboard/index.html`), whose ES modules under
 * `/dashboard/assets/` render the page named by the path. The files ship in the package (`src` is in
 * its `files`), so a packed install serves them too. They are read once, when the layer is built, and
 * served from memory: a request can only ever name one of those files (no path reaches the disk).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as DashboardPreview from "./DashboardPreview.js"

/** Where the assets are served from; `/dashboard/api/` (the session endpoints) is beside it. */
export const assetsPath = "/dashboard/assets"

/** The page paths (`:id` is a post's UUID); each answers the shell. */
export const pagePaths = [
  "/",
  "/sign-in",
  "/set-password",
  "/posts",
  "/posts/:id",
  "/calendar",
  "/compose",
  "/media",
  "/approvals",
  "/queue",
  "/campaigns",
  "/accounts",
  "/developer",
  "/device",
  "/team",
  "/join",
  "/notifications",
  "/analytics",
  "/bulk"
] as const

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml"
}

/**
 * Only this origin's scripts, styles and connections; images also from `data:`/`blob:` (previews of
 * files being uploaded) and https (account avatars); never framed.
 */
const securityHeaders = {
  "content-security-policy": "default-src 'self'; script-src 'self'; style-src 'self'; " +
    "img-src 'self' data: blob: https:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY"
}

/**
 * The folder of the files: `src/dashboard` beside this module when it runs from source, the same
 * folder from `dist/` and from the bundled command in `dist/bin/` (the package ships `src/` too).
 */
export const directory = (): string => {
  const here = path.dirname(fileURLToPath(import.meta.url))
  const candidates = [
    path.join(here, "dashboard"),
    path.join(here, "..", "src", "dashboard"),
    path.join(here, "..", "..", "src", "dashboard")
  ]
  const found = candidates.find((dir) => fs.existsSync(path.join(dir, "index.html")))
  if (found === undefined) throw new Error(`The dashboard's files are missing (looked in ${candidates.join(", ")})`)
  return found
}

interface Asset {
  readonly body: Uint8Array
  readonly contentType: string
}

/** Every file under `dir` by its path relative to it, with `/` separators. */
export const readAssets = (dir: string): ReadonlyMap<string, Asset> => {
  const assets = new Map<string, Asset>()
  const walk = (relative: string) => {
    for (const entry of fs.readdirSync(path.join(dir, relative), { withFileTypes: true })) {
      const name = relative === "" ? entry.name : `${relative}/${entry.name}`
      if (entry.isDirectory()) walk(name)
      else {
        const type = contentTypes[path.extname(entry.name)]
        if (type !== undefined) assets.set(name, { body: fs.readFileSync(path.join(dir, name)), contentType: type })
      }
    }
  }
  walk("")
  return assets
}

/**
 * Browser builds of npm packages the pages load, served under `vendor/` from the installed package
 * (a dependency of this one), so the file is the one npm installed and audits, from source, `dist/`
 * and the bundled command alike (resolved at run time: the bundle does not inline it). Chart.js's UMD
 * build is the one file that runs in a browser without an import map (its ES build imports
 * `@kurkle/color` by bare name); imported as a module it sets `globalThis.Chart`.
 */
export const vendorFiles: ReadonlyArray<{ readonly name: string; readonly resolve: () => string }> = [
  {
    name: "vendor/chart.umd.min.js",
    // The package exports only its entry points: the UMD build sits beside the CommonJS entry.
    resolve: () => path.join(path.dirname(createRequire(import.meta.url).resolve("chart.js")), "chart.umd.min.js")
  }
]

/** The vendor files, by the name the pages ask for. */
export const readVendorAssets = (): ReadonlyMap<string, Asset> =>
  new Map(
    vendorFiles.map((file) => [file.name, { body: fs.readFileSync(file.resolve()), contentType: contentTypes[".js"]! }])
  )

const notFound = HttpServerResponse.text("Not found", { status: 404, contentType: "text/plain; charset=utf-8" })

/** The page routes and the assets route, on the API's router (as `/docs` is). */
export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const assets = new Map([...readAssets(directory()), ...readVendorAssets()])
    const shell = assets.get("index.html")!
    const page = HttpServerResponse.uint8Array(shell.body, {
      contentType: shell.contentType,
      headers: { ...securityHeaders, "cache-control": "no-store" }
    })
    for (const pagePath of pagePaths) yield* router.get(pagePath, Effect.succeed(page))
    yield* router.post(DashboardPreview.path, DashboardPreview.handler)
    yield* router.get(
      `${assetsPath}/*`,
      Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
        const raw = request.url.split("?")[0]!.slice(assetsPath.length + 1)
        let name: string
        try {
          name = decodeURIComponent(raw)
        } catch {
          return notFound
        }
        const asset = assets.get(name)
        if (asset === undefined || name === "index.html") return notFound
        return HttpServerResponse.uint8Array(asset.body, {
          contentType: asset.contentType,
          // Small files, and a new release must reach open tabs: revalidate each time.
          headers: { ...securityHeaders, "cache-control": "no-cache" }
        })
      })
    )
  })
)
