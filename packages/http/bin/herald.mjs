#!/usr/bin/env node
// The `herald` command: runs the compiled JavaScript in dist/ (built by `npm ci` through the root
// `prepare` script, or `npm run build`). The import goes through the package's own exports, so running
// Node with `--conditions=herald-source --import tsx` (as the test suite does) runs the sources instead.
import { main } from "@herald/http/Cli"

const code = await main(process.argv.slice(2))
if (code !== "running") process.exitCode = code
