import { describe, expect, it } from 'vitest';
import { ContainerChanges } from './container-changes.ts';

function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describe('ContainerChanges', () => {
  it('runs the changes of one container one after another, and those of others at once', async () => {
    const changes = new ContainerChanges();
    const order: string[] = [];
    const stop = gate();
    const stopping = changes.run('a', async () => {
      await stop.opened;
      order.push('a: stopped');
    });
    const starting = changes.run('a', async () => {
      order.push('a: started');
    });
    await changes.run('b', async () => {
      order.push('b: started');
    });
    expect(order).toEqual(['b: started']);
    stop.open();
    await Promise.all([stopping, starting]);
    expect(order).toEqual(['b: started', 'a: stopped', 'a: started']);
  });

  it('lets a read wait for the change under way, and goes on after a change that failed', async () => {
    const changes = new ContainerChanges();
    const stop = gate();
    let stopped = false;
    const failing = changes.run('a', async () => {
      await stop.opened;
      stopped = true;
      throw new Error('the engine refused');
    });
    const read = changes.settled('a').then(() => stopped);
    stop.open();
    await expect(failing).rejects.toThrow('the engine refused');
    expect(await read).toBe(true);
    await expect(changes.run('a', async () => 'ran')).resolves.toBe('ran');
    await changes.settled('nothing-queued');
  });
});
