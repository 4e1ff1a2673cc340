/**
 * The changes (start, stop, restart) under way on each container of one
 * engine. Changes to one container run one after another, so each answers the
 * state its own change left; a read of that container's state waits for the
 * changes before it, rather than report a state about to change.
 */
export class ContainerChanges {
  /** The last change queued on each container id; settles when every change before it has. */
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `change` once every change already queued on the container has finished. */
  run<T>(containerId: string, change: () => Promise<T>): Promise<T> {
    const before = this.tails.get(containerId) ?? Promise.resolve();
    const result = before.then(change, change);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(containerId, tail);
    void tail.then(() => {
      if (this.tails.get(containerId) === tail) this.tails.delete(containerId);
    });
    return result;
  }

  /** Settles when the changes queued on the container so far have finished, or at once when there are none. */
  async settled(containerId: string): Promise<void> {
    await this.tails.get(containerId);
  }
}
