import type { Action } from '../../shared/catalog/action.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';

/** A tool filter as stored and as flags give it: globs over tool names and action ids. */
export interface ToolGlobs {
  /** Switched off: an action matching any of these is not offered. */
  disable: readonly string[];
  /** When any is given, only actions matching one of these are offered. */
  enable: readonly string[];
}

const GLOB = /^[A-Za-z0-9_.*?-]{1,100}$/;

function globToRegExp(glob: string): RegExp {
  return new RegExp(`^${glob.replaceAll('.', '\\.').replaceAll('*', '.*').replaceAll('?', '.')}$`);
}

/** Checks each glob, naming the flag of one that is not, before anything starts. */
export function parseToolGlobs(globs: readonly string[], flag: string): string[] {
  const parsed = globs.map((glob) => glob.trim()).filter((glob) => glob !== '');
  for (const glob of parsed) {
    if (!GLOB.test(glob)) {
      throw new FleetError('invalid_argument', `${flag} ${JSON.stringify(glob)} is not a tool glob`, {
        hint: 'Name tools or action ids with * and ? as wildcards, such as docker_stop, docker.* or *_delete.',
      });
    }
  }
  return parsed;
}

/** Globs over tool names and action ids: an action matches one by its tool name on the individual surface or by its id. */
export class ToolGlobSet {
  private readonly patterns: RegExp[];

  constructor(readonly globs: readonly string[]) {
    this.patterns = globs.map(globToRegExp);
  }

  get size(): number {
    return this.patterns.length;
  }

  matches(action: Pick<Action, 'id' | 'tool'>): boolean {
    return this.patterns.some((glob) => glob.test(action.tool) || glob.test(action.id));
  }
}

/**
 * Tools an operator switched off (`--disable-tools`, `--enable-tools`, and the
 * same per identity or mapping rule). A glob matches an action by its tool
 * name on the individual surface (`<domain>_<verb>`) or by its id
 * (`<domain>.<verb>`, so `<domain>.*` is a whole domain). An action switched off is hidden exactly
 * as one above the caller's level is, on every surface and wherever the
 * catalog shows (resources, prompts, completion, the console).
 */
export class ToolFilter {
  static readonly NONE = new ToolFilter({ disable: [], enable: [] });
  private readonly disable: ToolGlobSet;
  private readonly enable: ToolGlobSet;

  constructor(readonly globs: ToolGlobs) {
    this.disable = new ToolGlobSet(globs.disable);
    this.enable = new ToolGlobSet(globs.enable);
  }

  allows(action: Pick<Action, 'id' | 'tool'>): boolean {
    if (this.enable.size > 0 && !this.enable.matches(action)) return false;
    return !this.disable.matches(action);
  }

  /** The filter as words, for listings: `off docker.*; only docker_logs`. */
  describe(): string {
    return [
      ...(this.globs.disable.length ? [`off ${this.globs.disable.join(',')}`] : []),
      ...(this.globs.enable.length ? [`only ${this.globs.enable.join(',')}`] : []),
    ].join('; ');
  }
}
