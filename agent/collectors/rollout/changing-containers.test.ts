import { describe, expect, it } from 'vitest';
import { ChangingContainers } from './changing-containers.ts';

describe('ChangingContainers', () => {
  it('refuses a change of a container another change holds, and lets it go once that one is done, failed or not', async () => {
    const changing = new ChangingContainers();
    let release: () => void = () => undefined;
    const first = changing.with(['web', 'db'], () => new Promise<string>((resolve) => (release = () => resolve('done'))));

    await expect(changing.with(['db'], async () => 'second')).rejects.toMatchObject({
      code: 'conflict',
      message: 'a roll-forward of db is under way on this host',
    });
    expect(await changing.with(['cache'], async () => 'other')).toBe('other');
    release();
    expect(await first).toBe('done');
    await expect(changing.with(['web'], async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await changing.with(['web', 'db'], async () => 'again')).toBe('again');
  });
});
