import { describe, expect, it } from 'vitest';
import { versionSkew } from './version-skew.ts';

describe('the version skew between an agent and its broker', () => {
  it('serves agents of the same minor version and of the minor version just before, whatever their patch', () => {
    expect(versionSkew('0.4.0', '0.4.2')).toEqual({ verdict: 'serve' });
    expect(versionSkew('0.3.9', '0.4.0')).toEqual({ verdict: 'serve' });
    expect(versionSkew('2.0.1', '2.1.0')).toEqual({ verdict: 'serve' });
    expect(versionSkew('1.0.0-rc.1', '1.0.0')).toEqual({ verdict: 'serve' });
  });

  it('refuses an agent two minor versions behind, naming both versions and what to install', () => {
    const skew = versionSkew('0.2.5', '0.4.1');
    expect(skew.verdict).toBe('refuse');
    expect(skew).toMatchObject({
      message:
        'agent version 0.2.5 is too old for broker 0.4.1, which serves agents 0.3.x or 0.4.x (at most one minor version behind): upgrade this agent to 0.4.x',
    });
  });

  it('refuses an agent of an older major version, even the last minor of it', () => {
    expect(versionSkew('1.9.3', '2.0.0')).toMatchObject({ verdict: 'refuse', message: expect.stringMatching(/serves agents 2\.0\.x \(at most/) });
  });

  it('serves an agent newer than its broker with a warning to upgrade the broker first', () => {
    expect(versionSkew('0.5.0', '0.4.0')).toMatchObject({ verdict: 'warn', message: expect.stringMatching(/upgrade the broker first/) });
    expect(versionSkew('1.0.0', '0.9.0')).toMatchObject({ verdict: 'warn' });
  });

  it('serves an agent whose version is not a semantic version with a warning, its text quoted and cut to a line', () => {
    const skew = versionSkew(`dev\n${'x'.repeat(100)}`, '0.4.0');
    expect(skew.verdict).toBe('warn');
    expect(skew.verdict === 'warn' && skew.message).toMatch(/^the agent reports version "dev\\nx+", which is not a semantic version/);
    expect(skew.verdict === 'warn' && skew.message.includes('x'.repeat(64))).toBe(false);
  });
});
