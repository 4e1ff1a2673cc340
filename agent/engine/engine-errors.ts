/** The engine's error status code, when there is one (404 no such container, 304 not modified…); none when the engine was not reached. */
export function dockerStatus(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown }).statusCode;
  return typeof status === 'number' ? status : undefined;
}

/** Whether the engine has the object an inspect reads: true when it answers, false on its 404, the error otherwise. */
export async function engineHas(inspect: () => Promise<unknown>): Promise<boolean> {
  try {
    await inspect();
    return true;
  } catch (error) {
    if (dockerStatus(error) === 404) return false;
    throw error;
  }
}

/** The engine's own words for a failure, without the "(HTTP code …)" noise. */
export function dockerMessage(error: unknown): string {
  const json = (error as { json?: { message?: string } }).json;
  return json?.message ?? (error as Error).message ?? String(error);
}

/** Marks a refusal of the engine client that means no engine was ever there (engine-client.ts). */
export const ENGINE_ABSENT = Symbol('fleetmesh.engineAbsent');

/** Whether an engine failure means this host has no engine: its socket is not there and never was while the agent ran. */
export function engineAbsent(error: unknown): boolean {
  // A wrapper (a FleetError made of the refusal) keeps the refusal as its cause.
  for (let at = error, depth = 0; at && typeof at === 'object' && depth < 4; at = (at as { cause?: unknown }).cause, depth++) {
    if ((at as Record<symbol, unknown>)[ENGINE_ABSENT] === true) return true;
  }
  return false;
}
