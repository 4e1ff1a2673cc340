import { describe, expect, it } from 'vitest';
import { crashAnalysis } from './crash-analysis.ts';

describe('crashAnalysis', () => {
  it('names the exit code, its signal and flapping', () => {
    expect(crashAnalysis({ exitCode: 137, oomKilled: false, healthFailures: 0, restartsInWindow: 4, flapping: true })).toBe(
      'exited with code 137 (SIGKILL); 4 restarts in 10 minutes (flapping)',
    );
  });

  it('puts an OOM kill and failed health checks first', () => {
    expect(crashAnalysis({ exitCode: 137, oomKilled: true, healthFailures: 2, restartsInWindow: 1, flapping: false })).toBe(
      'killed for running out of memory (OOM); 2 failed health checks before; 1 restart in 10 minutes',
    );
  });

  it('says when the end of the run was not seen', () => {
    expect(crashAnalysis({ exitCode: null, oomKilled: false, healthFailures: 0, restartsInWindow: 1, flapping: false })).toMatch(/not seen/);
  });
});
