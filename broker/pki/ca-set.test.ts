import { describe, expect, it } from 'vitest';
import type { CaRow } from '../store/certificate-authorities-table.ts';
import { CaSet, type RotationPhase } from './ca-set.ts';

const row = (pin: string, state: CaRow['state'], cross: string | null = null): CaRow => ({
  pin,
  certificatePem: `-----BEGIN CERTIFICATE-----\n${pin}\n-----END CERTIFICATE-----`,
  keySealed: null,
  crossCertificatePem: cross,
  state,
  createdAt: 0,
  retiredAt: state === 'retired' ? 1 : null,
});

describe('what each phase of a CA rotation makes of the CAs', () => {
  const rows = [row('old', 'retired'), row('a', 'active'), row('b', 'next', '-----BEGIN CERTIFICATE-----\ncross-b\n-----END CERTIFICATE-----')];
  const at = (phase: RotationPhase) => new CaSet(rows, phase);

  it('signs with the next CA once agents move, serves from it only in update-servers, and trusts both until standby', () => {
    expect(['init', 'update-clients', 'update-servers', 'rollback'].map((p) => at(p as RotationPhase).signing().pin)).toEqual(['a', 'b', 'b', 'a']);
    expect(['init', 'update-clients', 'update-servers', 'rollback'].map((p) => at(p as RotationPhase).serving().pin)).toEqual(['a', 'a', 'b', 'a']);
    expect(at('update-clients').trustedPins()).toEqual(['a', 'b']);
    expect(new CaSet([row('old', 'retired'), row('a', 'active')], 'standby').trustedPins()).toEqual(['a']);
  });

  it('lets TLS take certificates of every CA the fleet had, so a retired one is refused in words', () => {
    expect(at('init').clientCasPem()).toContain('old');
    expect(at('init').isTrusted('old')).toBe(false);
  });

  it("serves the next CA's cross certificate and the active CA after the broker's own while brokers serve from the next", () => {
    expect(at('update-servers').servingChainPem()).toMatch(/cross-b[\s\S]*\na\n/);
    expect(at('update-clients').servingChainPem()).not.toContain('cross-b');
    expect(at('update-servers').validPins()).toEqual(['a']);
  });
});
