/** The engine's error status code, when there is one (404 no such container, 304 not modified…); none when the engine was not reached. */
export function dockerStatus(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown }).statusCode;
  return typeof status === 'number' ? status : undefined;
}

/** The engine's own words for a failure, without the "(HTTP code …)" noise. */
export function dockerMessage(error: unknown): string {
  const json = (error as { json?: { message?: string } }).json;
  return json?.message ?? (error as Error).message ?? String(error);
}
