import type { z } from 'zod';
import type { Action } from '../catalog/action.ts';
import type { FlagSpecs } from '../options/command-line.ts';

/**
 * What an agent reads of a domain when it starts: its name, rank, flags and
 * facts, declared in `<folder>/<folder>-head.ts` as `<folder>Head`, which
 * loads no schema library. The rest of the domain (its actions and report
 * schemas) is loaded when a call of the domain comes (`domain-heads.ts`).
 */
export interface DomainHead {
  /** The prefix of its action ids and the name of its meta tool. */
  readonly name: string;
  /** Where it is listed among the domains (docs, tool surfaces, token audit): lower first. */
  readonly rank: number;
  /**
   * Its icon's drawing: SVG shapes on a 24×24 grid, stroked in the current
   * color. The broker serves it as `/icons/<name>.svg`; its tools, resource
   * templates and prompts name that URL in their `icons`.
   */
  readonly icon: string;
  /** The `fleetmesh agent` flags its collector takes (`fleetmesh up` passes them on too). */
  readonly flags?: FlagSpecs;
  /**
   * Resolves those flags (each given value, else its default) into its
   * collector's options once, when the agent's options are resolved: a bad
   * value stops the agent, and config_validate reports it, with one line.
   * The collector gets the result as `domainOptions`.
   */
  readonly agentOptions?: (flags: Readonly<Record<string, unknown>>) => unknown;
  /**
   * The `fleetmesh broker` flags (`fleetmesh up` passes them on too) of the
   * broker service its broker actions use, which its broker half declares.
   */
  readonly brokerFlags?: FlagSpecs;
  /**
   * Host facts its collector states (`Collector.facts`) that the proto's Facts
   * message has no field for, by snake_case name, each with what it says. They
   * travel as strings in `domain_facts`; the broker keeps no undeclared name.
   */
  readonly facts?: Readonly<Record<string, string>>;
}

/**
 * One domain of fleetmesh (agent, fleet, system, docker, …), declared once in
 * its folder of `shared/domains/` as `<folder>/<folder>-domain.ts` exporting
 * `<folder>Domain`: its head with its actions and report schemas. `npm run gen`
 * lists every folder in `domains.gen.ts` and `domain-heads.gen.ts`. Generic
 * code (catalog, surfaces, docs, the broker's report validation) reads these
 * declarations and never names what a domain declares.
 */
export interface Domain extends DomainHead {
  /** Its actions, in the order docs and surfaces list them. */
  readonly actions: readonly Action[];
  /**
   * Actions its agents serve that are no tool: the broker's own calls to them
   * (the magic packet `wake` has one agent send). Not in the catalog; an agent
   * finds their declarations here as it finds its tools' in `actions`.
   */
  readonly brokerCalls?: readonly Action[];
  /**
   * The report kinds its agents send, each with the schema the broker checks a
   * payload against before anything reads it. A kind has a consumer (an indexer)
   * or is not declared.
   */
  readonly reports: Readonly<Record<string, z.ZodType>>;
}
