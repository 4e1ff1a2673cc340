import { describe, expect, it } from 'vitest';
import type { ContainerInventory, ContainerRecord } from '../../../shared/engine/records.ts';
import type { Host } from '../../agents/agent-registry.ts';
import type { IndexContext } from '../../index/indexer.ts';
import { DockerIndexer } from './docker-indexer.ts';

const host = { id: 'h-1', name: 'web-1' } as Host;

function container(name: string, state: string, status: string): ContainerRecord {
  return {
    id: `${name.padEnd(12, '0')}abcdef`,
    name,
    image: 'nginx:1.27',
    state,
    status,
    created_unix_ms: 1_700_000_000_000,
    restart_count: 0,
    labels: {},
    service_name: null,
    task_id: null,
    task_name: null,
    stack: null,
    sandbox_id: null,
  };
}

const inventory = (...containers: ContainerRecord[]): ContainerInventory => ({ taken_unix_ms: 0, containers, volumes: [], networks: [] });

function indexer() {
  const changes: { what: string; key: string; listed: boolean | undefined }[] = [];
  const context = { changed: (what: string, key: string, listed?: boolean) => changes.push({ what, key, listed }) } as unknown as IndexContext;
  return { docker: new DockerIndexer(context), changes };
}

describe('DockerIndexer', () => {
  it('says whether an inventory changed the things listed, or only their states, as agents resend it every 30 s', () => {
    const { docker, changes } = indexer();
    docker.take(host, 'container_inventory', inventory(container('web', 'running', 'Up 1 minute')), 1);
    // The same container later, in another state: listed as before.
    docker.take(host, 'container_inventory', inventory(container('web', 'exited', 'Exited (0) 2 seconds ago')), 2);
    // A container came.
    docker.take(host, 'container_inventory', inventory(container('web', 'exited', 'Exited (0) 9 seconds ago'), container('db', 'running', 'Up 1 second')), 3);
    // An engine event tells a state.
    const db = container('db', 'exited', '');
    docker.take(
      host,
      'container_event',
      { time_unix_ms: 4, type: 'container', action: 'die', id: db.id.slice(0, 12), name: 'db', image: db.image, exit_code: 1, attributes: {} },
      4,
    );
    // A container was renamed.
    docker.take(
      host,
      'container_inventory',
      inventory(container('web', 'exited', 'Exited (0) 9 seconds ago'), { ...container('db', 'exited', ''), name: 'db-old' }),
      5,
    );
    expect(changes).toEqual([
      { what: 'containers', key: 'h-1', listed: true },
      { what: 'containers', key: 'h-1', listed: false },
      { what: 'containers', key: 'h-1', listed: true },
      { what: 'containers', key: 'h-1', listed: false },
      { what: 'containers', key: 'h-1', listed: true },
    ]);
    expect(docker.rows({}, new Map([[host.id, host]])).map((resource) => [resource.row.name, resource.row.state])).toEqual([
      ['web', 'exited'],
      ['db-old', 'exited'],
    ]);
  });
});
