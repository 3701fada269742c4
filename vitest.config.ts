import { defaultClientConditions, defaultServerConditions } from "vite"
import { defineConfig } from "vitest/config"

// The tests run the TypeScript sources: the packages' `herald-source` export condition points at src/.

export default defineConfig({
  resolve: { conditions: ["herald-source", ...defaultClientConditions] },
  // Without Vite's `module` condition on the server side: packages that publish bundler-only ESM under
  // it (the AWS SDK's dist-es, with extensionless imports) load as Node loads them, from their node build.
  ssr: { resolve: { conditions: ["herald-source", ...defaultServerConditions.filter((c) => c !== "module")] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["./test/support/BuildCli.ts"],
    setupFiles: ["./vitest.setup.ts"],
    // Two test files at a time on a 2-core machine: most of a file's time is spent waiting on the
    // processes, databases and browsers it starts, so a second file fills that wait (vitest's default
    // here would be one, cores minus one).
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ["default", "./test/support/SummaryReporter.ts"]
  }
})
