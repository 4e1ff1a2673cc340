/** What an in-process test agent runs with unless a test says otherwise: no engine, fast backoff, quiet. */
export const TEST_AGENT_DEFAULTS = {
  labels: {},
  dockerAddress: '/nonexistent/docker.sock',
  alertThresholds: { cpu: 90, memory: 85, disk: 90 },
  backoffBaseMs: 100,
  backoffCapMs: 1000,
  sampleIntervalMs: 1000,
  healthListen: undefined,
  logLevel: 'error',
  logFormat: 'text',
} as const;
