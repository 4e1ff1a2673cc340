import { join } from 'node:path';
import { REPO_ROOT } from './build-dist.ts';
import type { ImageBuild } from './image-build.ts';

/** What `npm run release` was asked for, every default resolved. */
export interface ReleaseOptions {
  version: string;
  /** The checkout whose version files are moved and packed (the repository, or a copy in tests). */
  root: string;
  /** Where the artifacts are written: npm/ the tarball, helm/ the chart archive, server.json and release.json. */
  outDir: string;
  /** The image to build and tag, or none (no Docker engine at hand). */
  image?: ImageBuild;
}

const USAGE = `usage: npm run release -- VERSION [--out DIR] [--image TAG | --no-image] [--image-target release|prebuilt] [--base-image IMAGE]

Moves every file that states fleetmesh's version to VERSION (package.json and its lock, the Dockerfile's
version label, the Helm chart, server.json, the README's install commands, a CHANGELOG heading), then makes
the four artifacts of that version: the npm tarball, the image, the chart's .tgz and server.json.
  --out DIR             where the artifacts go (default release/VERSION)
  --image TAG           the image's tag (default fleetmesh:VERSION); --no-image skips the image
  --image-target T      release (default): the Dockerfile's build stage; prebuilt: built here, for an engine
                        that cannot pull the base images or reach the npm registry
  --base-image IMAGE    the Dockerfile's BASE_IMAGE (node 24 with npm and a user node)`;

/** Parses the command line once; a bad one fails with the usage. */
export function parseReleaseArgs(argv: string[], env: NodeJS.ProcessEnv): ReleaseOptions {
  const values = new Map<string, string | true>();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--no-image' || arg === '--help' || arg === '-h') values.set(arg, true);
    else if (['--out', '--image', '--image-target', '--base-image'].includes(arg)) {
      const value = argv[++i];
      if (value === undefined) throw new Error(`${arg} needs a value\n${USAGE}`);
      values.set(arg, value);
    } else if (arg.startsWith('-')) throw new Error(`unknown flag ${arg}\n${USAGE}`);
    else positional.push(arg);
  }
  if (values.has('--help') || values.has('-h')) throw new Error(USAGE);
  const [version, ...extra] = positional;
  if (!version || extra.length) throw new Error(`one VERSION is needed\n${USAGE}`);
  const target = (values.get('--image-target') ?? 'release') as string;
  if (target !== 'release' && target !== 'prebuilt') throw new Error(`--image-target is release or prebuilt, not ${target}\n${USAGE}`);
  const baseImage = values.get('--base-image') as string | undefined;
  return {
    version,
    root: REPO_ROOT,
    outDir: (values.get('--out') as string | undefined) ?? join(REPO_ROOT, 'release', version),
    ...(values.has('--no-image')
      ? {}
      : { image: { tag: (values.get('--image') as string | undefined) ?? `fleetmesh:${version}`, target, ...(baseImage ? { baseImage } : {}), env } }),
  };
}
