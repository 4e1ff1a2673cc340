import { describe, expect, it } from 'vitest';
import { FakeEngine } from '../../test/harness/fake-engine.ts';
import { ContainerFacts } from './container-facts.ts';

describe('ContainerFacts', () => {
  it('counts the containers and those running, and names the running container publishing each host port', async () => {
    const engine = new FakeEngine();
    engine.addContainer('web', { ports: [{ private: 80, public: 8080, protocol: 'tcp' }] });
    engine.addContainer('dns', {
      ports: [
        { private: 53, public: 53, protocol: 'udp' },
        { private: 8053, protocol: 'tcp' },
      ],
    });
    engine.addContainer('old', { state: 'exited', ports: [{ private: 80, public: 9090, protocol: 'tcp' }] });
    const facts = new ContainerFacts(engine.client);

    expect(await facts.counts()).toEqual({ running: 2, total: 3 });
    expect(await facts.publishedPorts()).toEqual(
      new Map([
        ['tcp:8080', 'web'],
        ['udp:53', 'dns'],
      ]),
    );
  });

  it('fails as the engine does when it cannot be reached', async () => {
    const engine = new FakeEngine();
    engine.stopEngine();
    await expect(new ContainerFacts(engine.client).counts()).rejects.toThrow('ECONNREFUSED');
  });
});
