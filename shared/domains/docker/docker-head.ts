import type { DomainHead } from '../domain.ts';

/** Each host's Docker engine: its containers, their logs, stats and events. */
export const dockerHead = {
  name: 'docker',
  rank: 40,
  icon: '<rect x="3" y="10" width="18" height="9" rx="1"/><path d="M7 10V6h4v4M13 10V6h4v4"/>',
  flags: {
    'docker-socket': {
      type: 'string',
      description: 'the Docker engine: a socket path, unix://PATH or tcp://HOST:PORT (default: DOCKER_HOST, else /var/run/docker.sock)',
      placeholder: 'ADDRESS',
    },
  },
} as const satisfies DomainHead;
