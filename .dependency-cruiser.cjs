/**
 * The dependency rules the build enforces (`npm run lint:deps`, run by `.ci/run`):
 * - the packages depend one way: http -> adapters -> core;
 * - core does no I/O: it imports `effect` and its own modules, nothing else (no Node built-ins, no
 *   other npm package);
 * - core's feature folders are layered, and a folder imports only folders below it (see `coreLayers`).
 * - no module of core imports itself back through a chain of imports (no cycle);
 * - a core folder's `internal/` modules are its own: no other folder, and no other package, imports them.
 */

/**
 * Core's folders from the bottom up. `kernel` holds ids, errors and the shared ports; `domain` the
 * values every feature shares (platforms, accounts, media, posts and destinations); `access` the
 * organizations, keys, users and plans; `webhooks` the event vocabulary; `platforms` the platform
 * rules and the client port; then accounts, media, AI, campaigns, posts, the approval workflow,
 * publishing and analytics, each built on what is below it.
 */
const coreLayers = [
  "kernel",
  "domain",
  "access",
  "webhooks",
  "platforms",
  "accounts",
  "media",
  "ai",
  "campaigns",
  "posts",
  "workflow",
  "publishing",
  "analytics"
]

const layerRules = coreLayers.slice(0, -1).map((layer, index) => ({
  name: `core-layer-${layer}`,
  comment: `core/${layer} may import only the folders below it: ${coreLayers.slice(0, index).join(", ") || "none"}`,
  severity: "error",
  from: { path: `^packages/core/src/${layer}/` },
  to: { path: `^packages/core/src/(${coreLayers.slice(index + 1).join("|")})/` }
}))

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "packages-one-way",
      comment: "core imports neither adapters nor http; adapters do not import http",
      severity: "error",
      from: { path: "^packages/core/" },
      to: { path: "^packages/(adapters|http)/" }
    },
    {
      name: "adapters-not-http",
      severity: "error",
      from: { path: "^packages/adapters/" },
      to: { path: "^packages/http/" }
    },
    {
      name: "core-no-io",
      comment: "core does no I/O: no Node built-ins",
      severity: "error",
      from: { path: "^packages/core/src/" },
      to: { dependencyTypes: ["core"] }
    },
    {
      name: "core-only-effect",
      comment: "core's only dependency is effect",
      severity: "error",
      from: { path: "^packages/core/src/" },
      to: {
        dependencyTypes: ["npm", "npm-dev", "npm-optional", "npm-peer", "npm-bundled", "npm-no-pkg", "npm-unknown"],
        pathNot: "node_modules/effect/"
      }
    },
    {
      name: "not-unresolvable",
      comment: "every import resolves",
      severity: "error",
      from: { path: "^packages/[^/]+/src/" },
      to: { couldNotResolve: true }
    },
    {
      name: "core-no-cycle",
      comment: "no module of core reaches itself through its imports",
      severity: "error",
      from: { path: "^packages/core/src/" },
      to: { circular: true }
    },
    {
      name: "core-internal-private",
      comment: "a core folder's internal/ modules are imported only from within that folder",
      severity: "error",
      from: { path: "^packages/core/src/([^/]+)/" },
      to: { path: "^packages/core/src/[^/]+/internal/", pathNot: "^packages/core/src/$1/" }
    },
    {
      name: "core-internal-not-outside",
      comment: "adapters and http do not import a core folder's internal/ modules",
      severity: "error",
      from: { path: "^packages/(adapters|http)/" },
      to: { path: "^packages/core/src/[^/]+/internal/" }
    },
    ...layerRules
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(build|dist|node_modules)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.base.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["herald-source", "import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".json"]
    }
  }
}
