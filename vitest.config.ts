import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'shared/**/*.test.ts', 'broker/**/*.test.ts', 'agent/**/*.test.ts', 'cli/**/*.test.ts', 'scripts/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    pool: 'forks',
    maxWorkers: 2,
    // Tests cross processes and real sockets: a flaky failure is a bug to fix, not to retry.
    retry: 0,
    // One private Docker engine and one private PostgreSQL for the whole run, not one per test.
    globalSetup: ['test/harness/docker-engine.ts', 'test/harness/postgres-server.ts'],
  },
});
