import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import type { AgentIdentity } from '../identity/agent-identity.ts';
import { enrollWithBackoff } from './enroll-with-backoff.ts';

const enrolled = { agentId: 'a1', name: 'web-1' } as AgentIdentity;
const backoff = { baseMs: 1, capMs: 2, log: silentLogger };

/** An enroll that fails with each given error in turn, then succeeds. */
function failingWith(...errors: FleetError[]) {
  let attempts = 0;
  return {
    enroll: async () => {
      const error = errors[attempts];
      attempts += 1;
      if (error) throw error;
      return enrolled;
    },
    attempts: () => attempts,
  };
}

describe('enrolling with backoff', () => {
  it('keeps trying while the broker cannot be reached, asks to be tried later or its store cannot answer, then enrolls', async () => {
    const unreachable = new FleetError('agent_offline', 'no TLS answer from the broker at b:7443 within 10 s');
    const limited = new FleetError('forbidden', 'too many enrollment attempts from 10.0.0.2; retry in 2 s', {
      details: { grpcCode: grpc.status.RESOURCE_EXHAUSTED },
    });
    const busyStore = new FleetError('unavailable', "the broker's store stayed too busy to settle a change (8 attempts)", {
      details: { grpcCode: grpc.status.UNAVAILABLE },
    });
    const fake = failingWith(unreachable, unreachable, limited, busyStore, unreachable);
    expect(await enrollWithBackoff(fake.enroll, backoff)).toBe(enrolled);
    expect(fake.attempts()).toBe(6);
  });

  it('gives up at once on a refusal', async () => {
    const refused = new FleetError('forbidden', 'enrollment refused: join token abc has been used already', {
      details: { grpcCode: grpc.status.PERMISSION_DENIED },
    });
    const fake = failingWith(refused);
    await expect(enrollWithBackoff(fake.enroll, backoff)).rejects.toThrow(/has been used already/);
    expect(fake.attempts()).toBe(1);
  });
});
