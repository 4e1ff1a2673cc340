import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { parseGrant } from '../../broker/auth/grants.ts';
import { describeMatch } from '../../broker/auth/oauth/mapping-rules.ts';
import { ToolFilter } from '../../broker/auth/tool-filter.ts';
import { parseIssuerUrl } from '../../broker/oauth/oauth-options.ts';
import { BrokerStore } from '../../broker/store/broker-store.ts';
import type { RuleMatch } from '../../broker/store/identity-rules-table.ts';
import type { Level } from '../../shared/catalog/action.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { formatTable } from '../../shared/format/table.ts';
import { BROKER_DATA_DIR_FLAG, OUTPUT_FLAG } from '../../shared/options/common-flags.ts';
import { defineCommand } from '../command.ts';
import { IDENTITY_TOOLS_FLAGS, toolGlobsOf } from './identity-command.ts';

export const identityMapCommand = defineCommand({
  spec: {
    name: 'identity map',
    summary: 'Add a rule mapping people signed in through OAuth to a level, grants and tools; the first rule that matches decides.',
    usage:
      'fleetmesh identity map --issuer URL [--group G] [--email GLOB] [--subject GLOB] [--claim k=v,…] --level 0..3 [--grant KIND:PATTERN[=read|write] …] [--disable-tools GLOB,…]',
    details:
      'The issuer is the one that knows the people: the provider given to --oauth, or to --oauth-upstream for people the built-in server signs in through it. Rules are tried in the order they were added; someone no rule matches is let in for nothing. A rule added or removed takes effect at their next request (fleetmesh identity rules lists them, fleetmesh identity unmap removes one). Without --grant a rule gives *:*=write.',
    flags: {
      ...BROKER_DATA_DIR_FLAG,
      issuer: { type: 'string', description: 'the issuer that knows the people it maps', placeholder: 'URL', env: false },
      group: { type: 'string', description: 'a group their groups claim names', placeholder: 'GROUP', env: false },
      email: { type: 'string', description: 'their email (a glob, any case), such as *@example.com', placeholder: 'GLOB', env: false },
      subject: { type: 'string', description: 'their subject at the issuer (a glob)', placeholder: 'GLOB', env: false },
      claim: { type: 'labels', description: 'other claims, each equal to the value given', default: {}, placeholder: 'k=v,…', env: false },
      level: {
        type: 'integer',
        description: 'operations level 0-3 (the broker --operations-level caps it again)',
        min: 0,
        max: 3,
        placeholder: 'N',
        env: false,
      },
      grant: { type: 'list', description: 'a grant; repeat for several', repeatable: true, default: [], placeholder: 'KIND:PATTERN[=read|write]', env: false },
      ...IDENTITY_TOOLS_FLAGS,
    },
  },
  async run(parsed, io) {
    const { values } = parsed;
    if (values.issuer === undefined) throw new FleetError('invalid_argument', 'missing --issuer', { hint: 'Give the issuer URL that knows the people.' });
    if (values.level === undefined) throw new FleetError('invalid_argument', 'missing --level', { hint: 'Give --level 0 (read-only) … 3 (impactful).' });
    const issuer = parseIssuerUrl(values.issuer, '--issuer');
    const grants = values.grant.length ? values.grant : ['*:*=write'];
    for (const grant of grants) parseGrant(grant);
    const match: RuleMatch = {
      ...(values.group !== undefined ? { group: values.group } : {}),
      ...(values.email !== undefined ? { email: values.email } : {}),
      ...(values.subject !== undefined ? { subject: values.subject } : {}),
      ...(Object.keys(values.claim).length ? { claims: values.claim } : {}),
    };
    const store = await BrokerStore.open(resolve(values['data-dir']), { store: values.store });
    try {
      const rule = await store.identityRules.add({
        id: `rule-${randomBytes(4).toString('hex')}`,
        issuer,
        match,
        level: values.level as Level,
        grants,
        tools: toolGlobsOf(values),
        createdAt: Date.now(),
      });
      io.stdout(`Rule ${rule.id} (number ${rule.position}): people of ${issuer} with ${describeMatch(match)} get level ${rule.level}, ${grants.join(' ')}.\n`);
      return 0;
    } finally {
      await store.close();
    }
  },
});

export const identityRulesCommand = defineCommand({
  spec: {
    name: 'identity rules',
    summary: 'List the rules mapping people signed in through OAuth, in the order they are tried.',
    usage: 'fleetmesh identity rules [--output text|json]',
    flags: { ...BROKER_DATA_DIR_FLAG, ...OUTPUT_FLAG },
  },
  async run(parsed, io) {
    const store = await BrokerStore.open(resolve(parsed.values['data-dir']), { create: false, store: parsed.values.store });
    try {
      const rules = await store.identityRules.list();
      if (parsed.values.output === 'json') {
        io.stdout(`${JSON.stringify(rules, null, 2)}\n`);
        return 0;
      }
      const rows = rules.map((rule) => [
        String(rule.position),
        rule.id,
        rule.issuer,
        describeMatch(rule.match),
        String(rule.level),
        rule.grants.join(' '),
        new ToolFilter(rule.tools).describe() || '-',
      ]);
      io.stdout(
        rows.length
          ? `${formatTable(['#', 'ID', 'ISSUER', 'MATCHES', 'LEVEL', 'GRANTS', 'TOOLS OFF'], rows)}\n`
          : 'No mapping rules: people who sign in through OAuth are let in for nothing. Add one with fleetmesh identity map.\n',
      );
      return 0;
    } finally {
      await store.close();
    }
  },
});

export const identityUnmapCommand = defineCommand({
  spec: {
    name: 'identity unmap',
    summary: 'Remove a mapping rule: the people it let in are refused at their next request, unless another rule maps them.',
    usage: 'fleetmesh identity unmap RULE',
    positionals: [{ name: 'RULE', description: 'the rule id fleetmesh identity rules shows', required: true }],
    flags: { ...BROKER_DATA_DIR_FLAG },
  },
  async run(parsed, io) {
    const store = await BrokerStore.open(resolve(parsed.values['data-dir']), { create: false, store: parsed.values.store });
    try {
      const id = parsed.positionals[0] ?? '';
      if (!(await store.identityRules.remove(id))) {
        throw new FleetError('not_found', `no mapping rule ${id}`, { hint: 'fleetmesh identity rules lists them.' });
      }
      io.stdout(`removed mapping rule ${id}\n`);
      return 0;
    } finally {
      await store.close();
    }
  },
});
