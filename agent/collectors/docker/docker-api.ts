import Docker from 'dockerode';

/** The slice of dockerode the docker collector uses: a test may pass a fake, the agent passes dockerode. */
export type DockerApi = Pick<Docker, 'listContainers' | 'listVolumes' | 'getContainer' | 'getEvents' | 'ping' | 'version' | 'modem'>;

/** A dockerode client for a socket path, `unix://…`, or `tcp://host:port`. */
export function createDockerApi(address: string): Docker {
  if (address.startsWith('tcp://') || address.startsWith('http://')) {
    const url = new URL(address.replace(/^tcp:/, 'http:'));
    return new Docker({ host: url.hostname, port: Number(url.port || 2375), protocol: 'http' });
  }
  return new Docker({ socketPath: address.replace(/^unix:\/\//, '') });
}

/** The engine's error status code, when there is one (404 no such container, 304 not modified…). */
export function dockerStatus(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown }).statusCode;
  return typeof status === 'number' ? status : undefined;
}

/** The engine's own words for a failure, without the "(HTTP code …)" noise. */
export function dockerMessage(error: unknown): string {
  const json = (error as { json?: { message?: string } }).json;
  return json?.message ?? (error as Error).message ?? String(error);
}

export function unixMs(iso: string | undefined): number | null {
  if (!iso || iso.startsWith('0001-')) return null;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? null : ms;
}
