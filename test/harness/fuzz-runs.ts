/**
 * How many cases each property-based test runs: a few hundred in the normal
 * run, and as many as FLEETMESH_FUZZ_RUNS says in the nightly-size run
 * (`FLEETMESH_FUZZ_RUNS=10000 npx vitest run test/faults/fuzz-*.test.ts`).
 */
export function fuzzRuns(normalRuns: number): number {
  const asked = Number(process.env.FLEETMESH_FUZZ_RUNS);
  return Number.isInteger(asked) && asked > 0 ? asked : normalRuns;
}

/** The timeout a test with this many cases needs, at a generous cost per case on a busy machine. */
export function fuzzTimeoutMs(runs: number, perCaseMs: number): number {
  return Math.max(60_000, runs * perCaseMs);
}
