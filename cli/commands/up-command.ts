import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { Agent } from '../../agent/agent.ts';
import { AGENT_FLAGS, resolveAgentOptions } from '../../agent/agent-options.ts';
import { loadIdentity } from '../../agent/identity/agent-identity.ts';
import { createIdentity, TokenRefused, verifyBearerToken } from '../../broker/auth/identities.ts';
import { Broker } from '../../broker/broker.ts';
import { BROKER_FLAGS, resolveBrokerOptions } from '../../broker/broker-options.ts';
import { AGENT_ROLE_NAMES } from '../../broker/domains/broker-domains.ts';
import { createJoinToken } from '../../broker/enrollment/join-tokens.ts';
import type { BrokerStore } from '../../broker/store/broker-store.ts';
import { createLogger } from '../../shared/log/logger.ts';
import type { FlagSpec } from '../../shared/options/command-line.ts';
import { writePrivateKey } from '../../shared/pki/key-files.ts';
import { currentLaunchPlace } from '../agent-launcher.ts';
import { clientSnippets } from '../client-snippets.ts';
import { defineCommand } from '../command.ts';
import { untilSignal } from '../until-signal.ts';

const ADMIN_TOKEN_FILE = 'admin.token';

/**
 * The agent flags `up` passes on to its local agent: all of them but those `up`
 * decides itself (which broker, how to enroll, where state lives, its name and
 * logging, which it shares with the broker). A flag added to the agent is
 * taken by `up` too.
 */
const {
  broker: _broker,
  token: _token,
  'token-file': _tokenFile,
  'ca-pin': _caPin,
  'ca-pin-file': _caPinFile,
  'data-dir': _dataDir,
  name: _name,
  'name-file': _nameFile,
  'log-level': _logLevel,
  'log-format': _logFormat,
  ...LOCAL_AGENT_FLAGS
} = AGENT_FLAGS;

const UP_FLAGS = {
  ...BROKER_FLAGS,
  'data-dir': {
    type: 'string',
    description: 'state of both the broker (DIR/broker) and the local agent (DIR/agent)',
    default: '.fleetmesh',
    placeholder: 'DIR',
  },
  'web-listen': { ...BROKER_FLAGS['web-listen'], description: 'where the web console listens (HTTP); off turns it off', default: '127.0.0.1:7480' },
  oauth: {
    ...BROKER_FLAGS.oauth,
    description:
      "how MCP clients sign in besides identity tokens: builtin (people sign in on the console's pages; off with --web-listen off), off, or the https issuer URL of an OpenID provider to trust",
    default: 'builtin',
  },
  name: { type: 'string', description: 'the local agent name', default: hostname(), placeholder: 'NAME', env: 'FLEETMESH_AGENT_NAME' },
  ...LOCAL_AGENT_FLAGS,
} as const satisfies Record<string, FlagSpec>;

/** The admin token `up` keeps in its data dir: reused while valid, made anew otherwise. */
async function adminToken(store: BrokerStore, root: string): Promise<{ token: string; created: boolean }> {
  const file = join(root, ADMIN_TOKEN_FILE);
  if (existsSync(file)) {
    const token = readFileSync(file, 'utf8').trim();
    try {
      await verifyBearerToken(store, token);
      return { token, created: false };
    } catch (error) {
      if (!(error instanceof TokenRefused)) throw error;
    }
  }
  const existing = await store.identities.findLiveByName('admin');
  if (existing) await store.identities.revoke(existing.id, Date.now());
  const { token } = await createIdentity(store, { name: 'admin', level: 3 });
  writePrivateKey(file, `${token}\n`);
  return { token, created: true };
}

export const upCommand = defineCommand({
  spec: {
    name: 'up',
    summary: 'Start a broker and a local agent on this machine, with nothing to configure (what npm start runs).',
    usage: 'fleetmesh up [flags]',
    details:
      'State lives in ./.fleetmesh/ by default: DIR/broker for the broker (admin commands default to it), DIR/agent for the local agent, and DIR/admin.token for the admin MCP token it prints.',
    flags: UP_FLAGS,
    configFile: true,
  },
  async run(parsed, io) {
    const { values } = parsed;
    const root = resolve(values['data-dir']);
    const brokerDir = join(root, 'broker');
    const agentDir = join(root, 'agent');
    // The built-in sign-in is the console's: with the console off, clients sign in with identity tokens only.
    const oauth = values.oauth === 'builtin' && values['web-listen'] === 'off' ? 'off' : values.oauth;
    const brokerOptions = resolveBrokerOptions({ ...values, oauth, 'data-dir': brokerDir });
    const log = createLogger({ level: brokerOptions.logLevel, format: brokerOptions.logFormat });
    const broker = await Broker.start(brokerOptions, log.child({ component: 'broker' }));
    let agent: Agent | undefined;
    try {
      const { token, created } = await adminToken(broker.store, root);
      const enrolled = loadIdentity(agentDir) !== undefined;
      const joinToken = enrolled
        ? undefined
        : (await createJoinToken(broker.store, { ttlMs: 10 * 60_000, uses: 1, labels: {}, roles: [...AGENT_ROLE_NAMES] })).token;
      const agentOptions = resolveAgentOptions(
        {
          ...values,
          broker: `localhost:${broker.grpcPort}`,
          token: joinToken,
          'token-file': undefined,
          'ca-pin': broker.authority.pin,
          'ca-pin-file': undefined,
          'name-file': undefined,
          'data-dir': agentDir,
        },
        io.env.DOCKER_HOST,
      );
      agent = await Agent.start(agentOptions, log.child({ component: 'agent' }));
      await agent.connection.waitConnected();
      const name = agent.connection.currentIdentity.name;
      io.stdout(
        [
          '',
          'fleetmesh is up.',
          '',
          `  MCP endpoint        ${broker.mcpUrl}   (${brokerOptions.toolSurface} tools, operations level ${brokerOptions.operationsLevel})`,
          ...(broker.web ? [`  web console         ${broker.web.url}   (sign in with the admin token)`] : []),
          ...(broker.oauth
            ? [
                `  OAuth sign-in       ${broker.oauth.issuer}   (${brokerOptions.oauth.mode === 'builtin' ? 'built in: clients with no token are sent to the console to sign in' : 'tokens of this provider, mapped with fleetmesh identity map'})`,
              ]
            : []),
          `  admin token         ${token}${created ? '' : `   (kept in ${join(root, ADMIN_TOKEN_FILE)})`}`,
          `  agents connect to   ${brokerOptions.grpcListen.replace(/:\d+$/, `:${broker.grpcPort}`)} (gRPC, mutual TLS; CA pin ${broker.authority.pin})`,
          `  local agent         ${name} (online)`,
          `  state               ${root}`,
          '',
          'MCP client configuration, per client:',
          '',
          ...clientSnippets({
            url: broker.mcpUrl,
            token,
            tokenFile: join(root, ADMIN_TOKEN_FILE),
            node: process.execPath,
            packageRoot: currentLaunchPlace().packageRoot,
          }).flatMap((snippet) => [`${snippet.client} (${snippet.where}):`, '', snippet.text, '']),
          'Try it from a shell:  npx fleetmesh call get_fleet_status',
          'Add another host:     npx fleetmesh token create   (then run the command it prints on that host)',
          'See the fleet:        npx fleetmesh agents',
          '',
          'Press Ctrl-C to stop.',
          '',
        ].join('\n'),
      );
      const signal = await untilSignal();
      log.info('stopping', { signal });
    } finally {
      await agent?.stop();
      await broker.stop();
    }
    return 0;
  },
});
