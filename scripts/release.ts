/**
 * `npm run release -- VERSION …`: moves every version file to VERSION and
 * makes the npm tarball, the image, the Helm chart archive and server.json of
 * that version (scripts/release/release-options.ts lists the flags). It
 * publishes nothing: `npm publish` the tarball, push the image, push the chart
 * to a chart repository and `mcp-publisher publish` server.json afterwards,
 * then commit the version files and tag vVERSION.
 */
import { makeRelease } from './release/make-release.ts';
import { parseReleaseArgs } from './release/release-options.ts';

try {
  const options = parseReleaseArgs(process.argv.slice(2), process.env);
  const manifest = await makeRelease(options, (line) => process.stdout.write(`${line}\n`));
  process.stdout.write(`fleetmesh ${manifest.version}: artifacts in ${options.outDir} (release.json lists them)\n`);
} catch (error) {
  process.stderr.write(`release: ${(error as Error).message}\n`);
  process.exitCode = 1;
}
