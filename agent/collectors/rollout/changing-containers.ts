import { FleetError } from '../../../shared/errors/fleet-error.ts';

/**
 * The containers a roll-forward is replacing now, by name: a second change of
 * one of them while the first renames and recreates it would leave two
 * half-made containers, so it is refused until the first is done. The work
 * reads the containers again once it holds their names: what it read before
 * may be a container the first change has replaced since.
 */
export class ChangingContainers {
  private readonly names = new Set<string>();

  async with<T>(names: readonly string[], work: () => Promise<T>): Promise<T> {
    const busy = names.filter((name) => this.names.has(name));
    if (busy.length) {
      throw new FleetError('conflict', `a roll-forward of ${busy.join(', ')} is under way on this host`, {
        hint: 'Wait for it to finish (its answer says where it ended), then call again if still needed.',
      });
    }
    for (const name of names) this.names.add(name);
    try {
      return await work();
    } finally {
      for (const name of names) this.names.delete(name);
    }
  }
}
