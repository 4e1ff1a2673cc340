import { readFileSync } from 'node:fs';

/**
 * The official Proxmox VE API schema (`api-schema.json` beside this file, from
 * pve-docs' api viewer; see README.md for the revision) as a checker: which path
 * templates and methods exist, whether a request's parameters are known and of
 * the right type, and whether an answer has the documented shape. The PVE
 * simulator runs every request and answer through it, so the collector can call
 * only what the API documents and the simulator can answer only what it would.
 */

/** A parameter or return type as the schema writes it (a subset of JSON Schema, with Proxmox VE's `optional`). */
export interface TypeSchema {
  type?: string;
  optional?: number | boolean;
  enum?: string[];
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  pattern?: string;
  format?: unknown;
  properties?: Record<string, TypeSchema>;
  additionalProperties?: number | boolean | TypeSchema;
  items?: TypeSchema;
}

export interface MethodSchema {
  name?: string;
  parameters?: TypeSchema;
  returns?: TypeSchema;
  permissions?: unknown;
}

interface SchemaNode {
  path: string;
  info?: Record<string, MethodSchema>;
  children?: SchemaNode[];
}

export const API_SCHEMA_URL = new URL('./api-schema.json', import.meta.url);

const PVE_NODE = /^[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?$/;

/** Perl patterns the schema uses that JavaScript cannot compile are skipped, not guessed at. */
function compilePattern(pattern: string): RegExp | undefined {
  try {
    return new RegExp(`^(?:${pattern})$`);
  } catch {
    return undefined;
  }
}

function isOptional(schema: TypeSchema): boolean {
  return schema.optional === 1 || schema.optional === true;
}

function allowsExtra(schema: TypeSchema): boolean {
  const extra = schema.additionalProperties;
  return extra === 1 || extra === true || (typeof extra === 'object' && extra !== null);
}

/** A parameter arrives as text (query string, form body, path segment); Proxmox VE parses it by its declared type. */
function checkParameterValue(name: string, schema: TypeSchema, text: string): string[] {
  const problems: string[] = [];
  switch (schema.type) {
    case 'integer':
    case 'number': {
      const valid = schema.type === 'integer' ? /^-?\d+$/.test(text) : /^-?\d+(\.\d+)?$/.test(text);
      if (!valid) return [`parameter ${name}=${JSON.stringify(text)} is not ${schema.type === 'integer' ? 'an integer' : 'a number'}`];
      const value = Number(text);
      if (schema.minimum !== undefined && value < schema.minimum) problems.push(`parameter ${name}=${text} is below the minimum ${schema.minimum}`);
      if (schema.maximum !== undefined && value > schema.maximum) problems.push(`parameter ${name}=${text} is above the maximum ${schema.maximum}`);
      return problems;
    }
    case 'boolean':
      return /^(0|1|true|false|yes|no|on|off)$/i.test(text) ? [] : [`parameter ${name}=${JSON.stringify(text)} is not a boolean`];
    case 'string': {
      if (schema.enum && !schema.enum.includes(text)) problems.push(`parameter ${name}=${JSON.stringify(text)} is not one of ${schema.enum.join(', ')}`);
      if (schema.maxLength !== undefined && text.length > schema.maxLength) problems.push(`parameter ${name} is longer than ${schema.maxLength}`);
      const pattern = schema.pattern ? compilePattern(schema.pattern) : undefined;
      if (pattern && !pattern.test(text)) problems.push(`parameter ${name}=${JSON.stringify(text)} does not match ${schema.pattern}`);
      if (schema.format === 'pve-node' && !PVE_NODE.test(text)) problems.push(`parameter ${name}=${JSON.stringify(text)} is not a node name`);
      return problems;
    }
    default:
      return problems;
  }
}

/** Every place `value` departs from `schema`, as `where: what` lines; [] when it conforms. */
export function checkValue(schema: TypeSchema | undefined, value: unknown, where = 'data'): string[] {
  if (!schema?.type || schema.type === 'any') return [];
  const fail = (what: string) => [`${where}: ${what}, got ${JSON.stringify(value)?.slice(0, 80)}`];
  switch (schema.type) {
    case 'null':
      return value === null ? [] : fail('expected null');
    case 'string':
      if (typeof value !== 'string') return fail('expected a string');
      return schema.enum && !schema.enum.includes(value) ? fail(`expected one of ${schema.enum.join(', ')}`) : [];
    case 'integer':
      return Number.isInteger(value) ? [] : fail('expected an integer');
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? [] : fail('expected a number');
    case 'boolean':
      // Proxmox VE's JSON writes booleans as 1 and 0, and its own validator accepts both.
      return typeof value === 'boolean' || value === 0 || value === 1 ? [] : fail('expected a boolean');
    case 'array':
      if (!Array.isArray(value)) return fail('expected an array');
      return value.flatMap((item, index) => checkValue(schema.items, item, `${where}[${index}]`));
    case 'object': {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return fail('expected an object');
      const record = value as Record<string, unknown>;
      if (!schema.properties) return [];
      const problems: string[] = [];
      for (const [key, property] of Object.entries(schema.properties)) {
        if (record[key] === undefined) {
          if (!isOptional(property)) problems.push(`${where}.${key}: missing, and the schema does not mark it optional`);
        } else {
          problems.push(...checkValue(property, record[key], `${where}.${key}`));
        }
      }
      // Stricter than Proxmox VE's own validator: an answer field the schema does not document is reported,
      // unless the schema says the object has more (additionalProperties), so the simulator cannot drift from the API.
      if (!allowsExtra(schema)) {
        for (const key of Object.keys(record)) if (!(key in schema.properties)) problems.push(`${where}.${key}: not documented`);
      }
      return problems;
    }
    default:
      return [];
  }
}

export interface MatchedPath {
  /** Such as `/nodes/{node}/tasks/{upid}/status`. */
  template: string;
  /** Decoded values of the template's variables. */
  variables: Record<string, string>;
  methods: Record<string, MethodSchema>;
}

export class ApiSchema {
  private readonly templates: { segments: string[]; template: string; methods: Record<string, MethodSchema> }[] = [];

  constructor(tree: SchemaNode[]) {
    const walk = (nodes: SchemaNode[]) => {
      for (const node of nodes) {
        this.templates.push({ segments: node.path.split('/').slice(1), template: node.path, methods: node.info ?? {} });
        if (node.children) walk(node.children);
      }
    };
    walk(tree);
  }

  static load(url: URL = API_SCHEMA_URL): ApiSchema {
    return new ApiSchema(JSON.parse(readFileSync(url, 'utf8')) as SchemaNode[]);
  }

  get size(): number {
    return this.templates.length;
  }

  /** The template a concrete path (below /api2/json, segments URI-encoded) falls under; literal segments win over variables. */
  match(path: string): MatchedPath | undefined {
    const segments = path.split('/').slice(1);
    let best: { score: number; matched: MatchedPath } | undefined;
    for (const candidate of this.templates) {
      if (candidate.segments.length !== segments.length) continue;
      const variables: Record<string, string> = {};
      let score = 0;
      let fits = true;
      for (const [index, part] of candidate.segments.entries()) {
        const actual = segments[index] ?? '';
        const variable = /^\{(.+)\}$/.exec(part)?.[1];
        if (variable) {
          let decoded: string;
          try {
            decoded = decodeURIComponent(actual);
          } catch {
            fits = false;
            break;
          }
          if (decoded === '') fits = false;
          variables[variable] = decoded;
        } else if (part === actual) score += 1;
        else fits = false;
        if (!fits) break;
      }
      if (fits && (!best || score > best.score)) best = { score, matched: { template: candidate.template, variables, methods: candidate.methods } };
    }
    return best?.matched;
  }

  /**
   * What is wrong with a request: an undocumented path or method, an unknown
   * parameter, a value of the wrong type, a required parameter missing.
   */
  checkRequest(method: string, path: string, params: Record<string, string>): { matched: MatchedPath | undefined; problems: string[] } {
    const matched = this.match(path);
    if (!matched) return { matched, problems: [`${method} ${path}: no such path in the API schema`] };
    const declared = matched.methods[method];
    if (!declared) return { matched, problems: [`${method} ${matched.template}: the path has no ${method} method in the API schema`] };
    const schema = declared.parameters ?? {};
    const properties = schema.properties ?? {};
    const given: Record<string, string> = { ...params, ...matched.variables };
    const problems: string[] = [];
    for (const [name, text] of Object.entries(given)) {
      const property = properties[name];
      if (!property) {
        if (!allowsExtra(schema)) problems.push(`${method} ${matched.template}: unknown parameter ${name}`);
        continue;
      }
      problems.push(...checkParameterValue(name, property, text).map((problem) => `${method} ${matched.template}: ${problem}`));
    }
    for (const [name, property] of Object.entries(properties)) {
      if (!isOptional(property) && given[name] === undefined) problems.push(`${method} ${matched.template}: required parameter ${name} is missing`);
    }
    return { matched, problems };
  }

  /** What is wrong with an answer's `data` for this method of this template. */
  checkReturns(method: string, template: string, data: unknown): string[] {
    const declared = this.templates.find((candidate) => candidate.template === template)?.methods[method];
    if (!declared) return [`${method} ${template}: not in the API schema`];
    return checkValue(declared.returns, data).map((problem) => `${method} ${template} answer: ${problem}`);
  }
}
