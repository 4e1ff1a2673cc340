import { createRequire } from 'node:module';

type Yaml = typeof import('yaml');

let loaded: Yaml | undefined;

/**
 * The yaml library, required on first use: only a config file, an app
 * definition or a config check reads YAML, and an idle agent that loaded it at
 * start held its 70 modules for nothing (docs/performance.md).
 */
export function yamlLibrary(): Yaml {
  loaded ??= createRequire(import.meta.url)('yaml') as Yaml;
  return loaded;
}
