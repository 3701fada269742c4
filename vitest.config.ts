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
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ["default", "./test/support/SummaryReporter.ts"]
  }
})
