import { completable, type McpServer, ProtocolError, ProtocolErrorCode, type RegisteredPrompt } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { domainOf } from '../../shared/catalog/action.ts';
import { CATALOG } from '../../shared/catalog/catalog.ts';
import { mayReadSome } from '../auth/visibility.ts';
import { BROKER_DOMAINS } from '../domains/broker-domains.ts';
import type { DomainPrompt, PromptArgument, PromptTools } from '../domains/domain-prompt.ts';
import { fleetNames } from './completion/fleet-names.ts';
import type { IconLinks } from './icons/icon-links.ts';
import type { ResourceContext } from './resources/fleet-resources.ts';

/** Every prompt the domains' broker halves declare, in domain order. */
const PROMPTS: readonly DomainPrompt[] = BROKER_DOMAINS.flatMap((broker) => broker.prompts ?? []);

/** A prompt argument's schema, completed by `names` from what the identity may see. */
const argumentSchema = (argument: PromptArgument, names: (typed: string) => string[]) => {
  const base = z.string().max(256).describe(argument.description);
  return completable(argument.required ? base : base.optional(), (typed) => names(typed ?? ''));
};

/** The domain a prompt belongs to, for its icon: the one every tool it walks is of, if they share one. */
function domainOfPrompt(prompt: DomainPrompt): string | undefined {
  const domains = new Set(prompt.tools.map((tool) => CATALOG.find((action) => action.tool === tool)).map((action) => action && domainOf(action)));
  return domains.size === 1 ? [...domains][0] : undefined;
}

/**
 * Registers the prompts an identity may use on its session's server: within
 * its level, every tool a prompt walks offered to it, and its grants showing
 * some of each type the prompt reads. Arguments complete from the fleet as
 * the identity sees it, and a value naming something hidden is refused like
 * one naming nothing. Returns each prompt registered with the tools it walks,
 * so the session can leave out those whose tools the fleet cannot serve.
 */
export function registerPrompts(
  server: McpServer,
  contextOf: (signal: AbortSignal) => ResourceContext,
  icons: IconLinks,
): { prompt: RegisteredPrompt; tools: readonly string[] }[] {
  const now = () => contextOf(new AbortController().signal);
  const { identity, runner } = now();
  const offers = (tool: string) => {
    const action = CATALOG.find((a) => a.tool === tool);
    return action !== undefined && runner.allows(identity, action);
  };
  const level = runner.effectiveLevel(identity);
  const offered = PROMPTS.filter((prompt) => prompt.level <= level && prompt.tools.every(offers) && prompt.reads.every((type) => mayReadSome(identity, type)));
  // An identity offered none gets an empty menu: the server declares prompts, so the SDK answers prompts/list from the start.
  return offered.map((prompt) => {
    const argsSchema = Object.fromEntries(
      prompt.arguments.map((argument) => [argument.name, argumentSchema(argument, (typed) => fleetNames(now().view(), argument.names, typed))]),
    );
    const registered = server.registerPrompt(
      prompt.name,
      { title: prompt.title, description: prompt.description, argsSchema, ...icons.of(domainOfPrompt(prompt)) },
      async (args: Record<string, string | undefined>, ctx) => {
        const context = contextOf(ctx.mcpReq.signal);
        const view = context.view();
        const values: Record<string, string> = {};
        for (const argument of prompt.arguments) {
          const value = args[argument.name];
          if (value === undefined) continue;
          if (!fleetNames(view, argument.names, '').some((name) => name.toLowerCase() === value.toLowerCase())) {
            throw new ProtocolError(ProtocolErrorCode.InvalidParams, `no ${argument.names} "${value}" in the fleet; completion offers the names`);
          }
          values[argument.name] = value;
        }
        const tools: PromptTools = {
          offers,
          run: async (tool, toolArgs) => {
            const action = CATALOG.find((a) => a.tool === tool);
            if (!action) throw new ProtocolError(ProtocolErrorCode.InternalError, `no tool ${tool}`);
            return (await runner.run(identity, action, toolArgs, { tool, signal: ctx.mcpReq.signal })).structured;
          },
        };
        return { description: prompt.description, messages: [{ role: 'user', content: { type: 'text', text: await prompt.text(values, tools) } }] };
      },
    );
    return { prompt: registered, tools: prompt.tools };
  });
}
