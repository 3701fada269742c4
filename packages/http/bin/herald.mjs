#!/usr/bin/env node
// The `herald` command: runs the TypeScript sources through tsx, so it works after a plain `npm ci`.
import { register } from "tsx/esm/api"

register()
const { main } = await import("../src/Cli.ts")
const code = await main(process.argv.slice(2))
if (code !== "running") process.exitCode = code
