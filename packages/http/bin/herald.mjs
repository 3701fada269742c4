#!/usr/bin/env node
// The `herald` command: runs the compiled JavaScript, bundled into dist/bin/herald.mjs (built by
// `npm ci` through the root `prepare` script, or `npm run build`; see scripts/bundle-cli.mjs). When
// Node runs with `--conditions=herald-source --import tsx` (as the test suite does), the package's own
// exports point `@herald/http/Cli` at the TypeScript sources, and those run instead.
const cli = import.meta.resolve("@herald/http/Cli")
const { main } = await import(cli.endsWith(".ts") ? cli : "../dist/bin/herald.mjs")

const code = await main(process.argv.slice(2))
if (code !== "running") process.exitCode = code
