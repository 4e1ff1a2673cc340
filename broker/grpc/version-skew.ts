/**
 * The version skew policy between an agent and its broker (CHANGELOG.md, README
 * "Upgrading"): an agent of the broker's minor version or of the one just
 * before it is served; an older one, or one of an older major version, is
 * refused in words that name both versions; an agent newer than its broker is
 * served with a warning (brokers are upgraded first). Versions are compared by
 * major and minor only: patches never change what crosses the stream.
 */

/** What the broker does with an agent's Hello, and the sentence that says why. */
export type SkewVerdict = { verdict: 'serve' } | { verdict: 'warn'; message: string } | { verdict: 'refuse'; message: string };

const SEMVER = /^(\d+)\.(\d+)\.(\d+)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

function majorMinor(version: string): [number, number] | undefined {
  const match = SEMVER.exec(version);
  return match ? [Number(match[1]), Number(match[2])] : undefined;
}

export function versionSkew(agentVersion: string, brokerVersion: string): SkewVerdict {
  const broker = majorMinor(brokerVersion);
  if (!broker) return { verdict: 'serve' };
  const agent = majorMinor(agentVersion);
  // Shown quoted: the text is the agent's own (data, not ours), and at most a line.
  const shown = JSON.stringify(agentVersion.slice(0, 64));
  if (!agent)
    return {
      verdict: 'warn',
      message: `the agent reports version ${shown}, which is not a semantic version: its skew from broker ${brokerVersion} is not checked`,
    };
  const [agentMajor, agentMinor] = agent;
  const [brokerMajor, brokerMinor] = broker;
  const supported = brokerMinor > 0 ? `${brokerMajor}.${brokerMinor - 1}.x or ${brokerMajor}.${brokerMinor}.x` : `${brokerMajor}.${brokerMinor}.x`;
  if (agentMajor < brokerMajor || (agentMajor === brokerMajor && agentMinor < brokerMinor - 1)) {
    return {
      verdict: 'refuse',
      message: `agent version ${agentVersion} is too old for broker ${brokerVersion}, which serves agents ${supported} (at most one minor version behind): upgrade this agent to ${brokerMajor}.${brokerMinor}.x`,
    };
  }
  if (agentMajor > brokerMajor || agentMinor > brokerMinor) {
    return { verdict: 'warn', message: `agent version ${agentVersion} is newer than broker ${brokerVersion}: upgrade the broker first, then the agents` };
  }
  return { verdict: 'serve' };
}
