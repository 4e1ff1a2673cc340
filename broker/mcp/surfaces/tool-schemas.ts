import { z } from 'zod';
import type { Action } from '../../../shared/catalog/action.ts';
import { envelopeSchema, errorResultShape, nodeSchema } from '../../../shared/catalog/results.ts';
import { confirmShape, hostTargetShape, TARGET_KEYS } from '../../../shared/catalog/targets.ts';
import { BROKER_DOMAINS } from '../../domains/broker-domains.ts';

/** A JSON Schema object as MCP advertises it (2020-12). */
export type JsonSchema = { type: 'object'; [key: string]: unknown };

const SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/** What each domain route adds to its answers, by the `runsOn` that names it. */
const ROUTE_ANSWERS = new Map(BROKER_DOMAINS.flatMap((broker) => (broker.route?.answerShape ? [[broker.domain.name, broker.route.answerShape] as const] : [])));

function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  return z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
}

/** The full parameters of an action as its tool takes them: its own, targets for host actions, confirm for destructive ones. */
function toolInputShape(action: Action): z.ZodObject {
  let shape = action.input;
  if (action.runsOn === 'host') shape = shape.extend(hostTargetShape);
  if (action.risk === 'destructive' && !('confirm' in shape.shape)) shape = shape.extend(confirmShape);
  return shape.strict();
}

const inputCache = new Map<string, JsonSchema>();
const outputCache = new Map<string, JsonSchema>();

export function toolInputSchema(action: Action): JsonSchema {
  let schema = inputCache.get(action.id);
  if (!schema) {
    schema = toJsonSchema(toolInputShape(action), 'input');
    inputCache.set(action.id, schema);
  }
  return schema;
}

/**
 * Keywords that only bound a value: the broker checks each of them (and refuses
 * unknown parameters) with an error that names the bound or the accepted
 * parameters, so tools/list leaves them out.
 */
const BOUNDS = new Set(['$schema', 'minLength', 'maxLength', 'pattern', 'minItems', 'maxItems', 'minimum', 'maximum', 'additionalProperties']);

function compact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(compact);
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) if (!BOUNDS.has(key)) out[key] = compact(child);
  // JSON object keys are strings anyway.
  if (JSON.stringify(out.propertyNames) === '{"type":"string"}') delete out.propertyNames;
  // A choice between bare types reads shorter as a type list.
  const anyOf = out.anyOf as Record<string, unknown>[] | undefined;
  if (anyOf?.every((option) => Object.keys(option).length === 1 && typeof option.type === 'string')) {
    delete out.anyOf;
    out.type = anyOf.map((option) => option.type);
  }
  return out;
}

/** Parameters the server's instructions explain for every tool that takes them. */
const EXPLAINED_ONCE = ['confirm', 'cluster', 'version', 'wait'];

const advertisedCache = new Map<string, JsonSchema>();

/**
 * The input schema tools/list advertises: the action's parameters with what a
 * model needs to choose them. A tool that runs on hosts advertises `host` and
 * `selector` bare, so a client that sends only what a schema names still
 * reaches one host, the hosts whose labels match, or (with neither) the whole
 * fleet; the server's instructions say once what they mean, and that `hosts`
 * (a list of names) and `timeout_ms` are accepted too. The shared `confirm`,
 * `cluster`, `version` and `wait` are explained there rather than on every
 * tool; `server`, an alias of host, and `cursor`, which only the text of a
 * paged answer hands out, are accepted but not advertised. JSON Schema 2020-12
 * is MCP's default dialect, so no `$schema`. fleet://actions/{id} has the
 * full schema.
 */
export function advertisedInputSchema(action: Action): JsonSchema {
  let schema = advertisedCache.get(action.id);
  if (!schema) {
    const full = structuredClone(toolInputSchema(action));
    const properties = (full.properties ?? {}) as Record<string, Record<string, unknown>>;
    if (action.runsOn === 'host') {
      delete properties.server;
      delete properties.cursor;
      delete properties.hosts;
      delete properties.timeout_ms;
      for (const key of TARGET_KEYS) delete properties[key]?.description;
    }
    for (const key of EXPLAINED_ONCE) delete properties[key]?.description;
    schema = compact(full) as JsonSchema;
    advertisedCache.set(action.id, schema);
  }
  return schema;
}

/** What a call returns: one host's node when called with `host`, the fleet envelope otherwise; broker actions their own shape. */
export function toolOutputSchema(action: Action): JsonSchema {
  let schema = outputCache.get(action.id);
  if (!schema) {
    const shapes =
      action.runsOn === 'host'
        ? [envelopeSchema(action.output as z.ZodObject), nodeSchema(action.output as z.ZodObject)]
        : ROUTE_ANSWERS.has(action.runsOn)
          ? [(action.output as z.ZodObject).extend(ROUTE_ANSWERS.get(action.runsOn) ?? {})]
          : [action.output];
    // Recursive parts (a span's children) come with $defs; they must live at the root for their $refs to resolve.
    const defs: Record<string, unknown> = {};
    const anyOf = [...shapes, errorResultShape].map((shape, index) => {
      const json = toJsonSchema(shape, 'output');
      delete json.$schema;
      const own = json.$defs as Record<string, unknown> | undefined;
      delete json.$defs;
      if (!own) return json;
      // Each part names its definitions __schema0…; keep them apart.
      let text = JSON.stringify(json);
      for (const [name, definition] of Object.entries(own)) {
        const renamed = `part${index}_${name}`;
        defs[renamed] = JSON.parse(JSON.stringify(definition).replaceAll(`#/$defs/${name}"`, `#/$defs/${renamed}"`));
        text = text.replaceAll(`#/$defs/${name}"`, `#/$defs/${renamed}"`);
      }
      return JSON.parse(text) as JsonSchema;
    });
    schema = { $schema: SCHEMA_2020_12, type: 'object', anyOf, ...(Object.keys(defs).length ? { $defs: defs } : {}) };
    outputCache.set(action.id, schema);
  }
  return schema;
}

/** The required parameter names of a tool. */
export function requiredParameters(action: Action): string[] {
  return ((toolInputSchema(action).required as string[] | undefined) ?? []).slice();
}

/** One line per parameter: `name (type, required): description`, for compact listings. */
export function parameterSummary(action: Action): string[] {
  const schema = toolInputSchema(action);
  const properties = (schema.properties ?? {}) as Record<string, { type?: string; description?: string }>;
  const required = new Set(requiredParameters(action));
  return Object.entries(properties).map(([name, property]) =>
    `${name} (${property.type ?? 'any'}${required.has(name) ? ', required' : ''}): ${property.description ?? ''}`.trim(),
  );
}
