import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './build-dist.ts';
import { stageImageContext } from './image-context.ts';
import { runCommand } from './run-command.ts';

export interface ImageBuild {
  tag: string;
  /** release: the Dockerfile's own build (needs the base images and the npm registry); prebuilt: a context staged here. */
  target: 'release' | 'prebuilt';
  /** The Dockerfile's BASE_IMAGE, when not the official node image. */
  baseImage?: string;
  /** The environment docker runs in (DOCKER_HOST). */
  env: NodeJS.ProcessEnv;
}

/**
 * Builds the image of the version files in `root` (a checkout, or a release's
 * copy of its version files) with its version label, tags it, and checks the
 * label; resolves with the image id and its size in bytes.
 */
export async function buildImage(build: ImageBuild, version: string, root = REPO_ROOT): Promise<{ id: string; bytes: number }> {
  const args = ['build', '--target', build.target, '--build-arg', `FLEETMESH_VERSION=${version}`, '-t', build.tag];
  if (build.baseImage) args.push('--build-arg', `BASE_IMAGE=${build.baseImage}`);
  if (build.target === 'release') {
    await runCommand('docker', [...args, root], { env: build.env, inherit: true });
  } else {
    const context = mkdtempSync(join(tmpdir(), 'fm-image-'));
    try {
      await stageImageContext(context, root);
      // The classic builder: a base image imported into the engine is used as it is, never looked up in a registry.
      await runCommand('docker', [...args, context], { env: { ...build.env, DOCKER_BUILDKIT: '0' } });
    } finally {
      rmSync(context, { recursive: true, force: true });
    }
  }
  const inspected = await runCommand(
    'docker',
    ['image', 'inspect', '--format', '{{.Id}} {{.Size}} {{index .Config.Labels "org.opencontainers.image.version"}}', build.tag],
    {
      env: build.env,
    },
  );
  const [id = '', bytes = '0', labelled = ''] = inspected.trim().split(' ');
  if (labelled !== version) throw new Error(`the image ${build.tag} is labelled ${labelled || 'with no version'}, not ${version}`);
  return { id, bytes: Number(bytes) };
}
