import type { Level } from '../../shared/catalog/action.ts';
import type { ResourceType } from '../../shared/domains/resource-types.ts';

/** One argument of a prompt, naming a thing of the fleet. */
export interface PromptArgument {
  name: string;
  description: string;
  required: boolean;
  /** What it names in the fleet: completed from, and checked against, what the identity may see. */
  names: ResourceType;
}

/** What a prompt's text may use: whether a tool is offered to the identity, and a read run as the identity. */
export interface PromptTools {
  offers(tool: string): boolean;
  run(tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
}

/**
 * A guided investigation a client offers from a menu, declared by the broker
 * half of the domain whose things it walks; every step goes through the
 * normal tools.
 */
export interface DomainPrompt {
  name: string;
  title: string;
  description: string;
  /** The highest level among the tools it walks: never offered where a step would be refused. */
  level: Level;
  /** The tools its steps call: offered only to an identity that may call each. */
  tools: readonly string[];
  /** The types it reads: offered only to an identity whose grants show some of each. */
  reads: readonly ResourceType[];
  arguments: readonly PromptArgument[];
  /** The opening user message. Arguments are quoted as data, never spliced into instructions. */
  text(args: Record<string, string>, tools: PromptTools): string | Promise<string>;
}
