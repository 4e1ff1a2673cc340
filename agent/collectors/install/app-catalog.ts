import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type ErrorInfo, FleetError } from '../../../shared/errors/fleet-error.ts';
import { yamlLibrary } from '../../../shared/yaml/yaml-library.ts';
import type { AppDefinition } from './app-definition.ts';

interface CatalogEntry {
  app: AppDefinition;
  source: 'builtin' | 'site';
}

/**
 * The apps install_app knows: the built-in catalog (`app-catalog.json`) and
 * the site's own definitions (--app-catalog DIR, one YAML or JSON file per
 * app), which replace a built-in app of the same name. The site's folder is
 * read on every call, so a new file counts at once; a file that is not a valid
 * app is left out and named in the answer's errors.
 */
export class AppCatalog {
  /** The built-in apps, read and checked at the first call that reads the catalog (not when the agent starts). */
  private builtin: AppDefinition[] | undefined;

  constructor(private readonly siteDir: string | undefined) {}

  async load(): Promise<{ entries: Map<string, CatalogEntry>; errors: ErrorInfo[] }> {
    const [{ appDefinitionSchema }, catalog] = await Promise.all([import('./app-definition.ts'), import('./app-catalog.json', { with: { type: 'json' } })]);
    this.builtin ??= catalog.default.apps.map((app) => appDefinitionSchema.parse(app));
    const entries = new Map<string, CatalogEntry>(this.builtin.map((app) => [app.name, { app, source: 'builtin' }]));
    const errors: ErrorInfo[] = [];
    if (this.siteDir === undefined) return { entries, errors };
    let files: string[];
    try {
      files = (await readdir(this.siteDir)).filter((file) => /\.(ya?ml|json)$/.test(file)).sort();
    } catch (error) {
      errors.push(
        new FleetError('collector_failed', `the app catalog ${this.siteDir} cannot be read: ${(error as Error).message}`, {
          collector: 'install',
          hint: 'Check --app-catalog on that agent.',
        }).toInfo(),
      );
      return { entries, errors };
    }
    for (const file of files) {
      try {
        const text = await readFile(join(this.siteDir, file), 'utf8');
        const parsed = appDefinitionSchema.safeParse(file.endsWith('.json') ? JSON.parse(text) : yamlLibrary().parse(text));
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          throw new Error(`${issue?.path.join('.') || 'the file'}: ${issue?.message ?? 'invalid'}`);
        }
        entries.set(parsed.data.name, { app: parsed.data, source: 'site' });
      } catch (error) {
        errors.push(
          new FleetError('invalid_argument', `app catalog file ${file} is not a valid app: ${(error as Error).message}`, {
            collector: 'install',
            hint: 'Fix or remove the file; the other apps are listed.',
          }).toInfo(),
        );
      }
    }
    return { entries, errors };
  }

  async get(name: string): Promise<CatalogEntry> {
    const { entries } = await this.load();
    const entry = entries.get(name);
    if (!entry) {
      throw new FleetError('not_found', `no app "${name}" in this host's catalog`, {
        hint: `install_list shows the apps: ${[...entries.keys()].sort().join(', ')}.`,
      });
    }
    return entry;
  }
}
