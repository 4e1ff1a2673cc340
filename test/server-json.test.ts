import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../cli/cli.ts';
import { stdioCommand } from '../cli/commands/stdio-command.ts';
import { REPO_ROOT } from '../scripts/release/build-dist.ts';
import type { CommandSpec } from '../shared/options/command-line.ts';
import { flagVariables } from './harness/flag-variables.ts';

// biome-ignore lint/suspicious/noExplicitAny: server.json is read as whatever shape it has, and checked here
type Json = any;

const read = (path: string): Json => JSON.parse(readFileSync(join(REPO_ROOT, path), 'utf8'));

/** The registry's published schema, vendored (test/mcp-registry/SOURCE.md); draft-07, with URIs checked as URLs. */
function registryValidator() {
  const ajv = new Ajv({
    strict: false,
    allErrors: true,
    formats: {
      uri: (value: string) => URL.canParse(value),
    },
  });
  return ajv.compile(read('test/mcp-registry/server.schema.json'));
}

/** The `{names}` a registry template string refers to. */
const templateNames = (text: string) => [...text.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((match) => match[1]);

describe('the MCP Registry entry (server.json)', () => {
  const server = read('server.json');
  const pkg = read('package.json');
  const validate = registryValidator();

  it("is checked against the registry's published schema, pinned by version and digest", () => {
    const schemaBytes = readFileSync(join(REPO_ROOT, 'test/mcp-registry/server.schema.json'));
    const source = readFileSync(join(REPO_ROOT, 'test/mcp-registry/SOURCE.md'), 'utf8');
    expect(source).toContain(`sha256 \`${createHash('sha256').update(schemaBytes).digest('hex')}\``);
    expect(JSON.parse(schemaBytes.toString()).$id).toBe(server.$schema);
    expect(server.$schema).toMatch(/\/schemas\/\d{4}-\d{2}-\d{2}\/server\.schema\.json$/);
  });

  it('validates against that schema', () => {
    expect(validate(server), JSON.stringify(validate.errors, null, 2)).toBe(true);
  });

  it('would be refused by it with a version range, a missing description or a remote that is not a URL', () => {
    const broken = (change: (copy: Json) => void) => {
      const copy = structuredClone(server);
      change(copy);
      return validate(copy);
    };
    expect(broken((copy) => (copy.packages[0].version = 'latest'))).toBe(false);
    expect(broken((copy) => delete copy.description)).toBe(false);
    expect(broken((copy) => (copy.remotes[0].url = 'fleet.example.com/mcp'))).toBe(false);
  });

  it('names the package, its version and its repository as package.json does, so the registry can verify them', () => {
    // The registry checks an npm package's ownership by its mcpName, and the versions must agree.
    expect(server.name).toBe(pkg.mcpName);
    expect(server.version).toBe(pkg.version);
    expect(server.packages).toHaveLength(1);
    expect(server.packages[0]).toMatchObject({
      registryType: 'npm',
      identifier: pkg.name,
      version: pkg.version,
      runtimeHint: 'npx',
      transport: { type: 'stdio' },
    });
    expect(`git+${server.repository.url}.git`).toBe(pkg.repository.url);
    expect(server.repository.source).toBe('github');
  });

  it("runs the stdio relay through npx: its argument is the CLI's stdio command and its variables are that command's", () => {
    const [npm] = server.packages;
    expect(npm.packageArguments).toEqual([expect.objectContaining({ type: 'positional', value: 'stdio' })]);
    expect(COMMANDS.map((command) => command.name)).toContain('stdio');
    const variables = flagVariables(stdioCommand.spec as unknown as CommandSpec);
    const described = npm.environmentVariables.map((variable: Json) => variable.name);
    expect(described.filter((name: string) => !variables.has(name))).toEqual([]);
    expect(described).toEqual(['FLEETMESH_MCP_URL', 'FLEETMESH_MCP_TOKEN']);
    expect(npm.environmentVariables.find((variable: Json) => variable.name === 'FLEETMESH_MCP_TOKEN')).toMatchObject({ isRequired: true, isSecret: true });
  });

  it('reaches a broker directly over Streamable HTTP at /mcp, with its bearer token in a secret Authorization header', () => {
    expect(server.remotes).toHaveLength(1);
    const [remote] = server.remotes;
    expect(remote.type).toBe('streamable-http');
    expect(new URL(remote.url.replace('{broker}', 'fleet.example.com')).pathname).toBe('/mcp');
    expect(remote.headers).toEqual([expect.objectContaining({ name: 'Authorization', value: 'Bearer {token}', isRequired: true, isSecret: true })]);
    // Every template name has its variable, and every variable is used.
    expect(templateNames(remote.url)).toEqual(Object.keys(remote.variables));
    for (const header of remote.headers) expect(templateNames(header.value)).toEqual(Object.keys(header.variables));
  });
});
