import type { DomainHead } from '../domain.ts';

/** How long an image pull may take when the call names no timeout, in seconds. */
export const PULL_TIMEOUT_S = 300;
/** How long a new container may take to be healthy when the call names no timeout, in seconds. */
export const HEALTH_TIMEOUT_S = 60;

/**
 * Moving a Docker host to new images: pulls with the host's own registry
 * logins, its images, and containers and compose projects recreated on new
 * images with a health check's verdict and a way back. A domain of its own
 * beside docker's: these change what runs and reach registries, where the
 * docker domain reads and nudges containers, and it has a flag of its own.
 */
export const rolloutHead = {
  name: 'rollout',
  rank: 45,
  icon: '<path d="M4 17l5-5-5-5M12 19h8"/><rect x="13" y="5" width="7" height="7" rx="1"/>',
  flags: {
    'docker-config': {
      type: 'string',
      description:
        "the Docker config folder whose config.json holds this host's registry logins (auths, credHelpers, credsStore), for image pulls; default ~/.docker",
      env: 'DOCKER_CONFIG',
      placeholder: 'DIR',
    },
  },
} as const satisfies DomainHead;
