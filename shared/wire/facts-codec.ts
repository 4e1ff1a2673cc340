import { type MessageInitShape, ScalarType } from '@bufbuild/protobuf';
import type { DomainHead } from '../domains/domain.ts';
import { DOMAIN_HEADS } from '../domains/domain-heads.ts';
import { type Facts, FactsSchema } from '../gen/fleetmesh/v1/mesh_pb.ts';

/** Host facts as every part of fleetmesh sees them: snake_case keys, the proto's own field names. */
export type FactRecord = Record<string, string | number | boolean>;

/** The facts the domains declare beyond the proto's fields; a field of the proto keeps its own name. */
const DECLARED_FACTS: ReadonlySet<string> = new Set(
  DOMAIN_HEADS.flatMap((domain: DomainHead) => Object.keys(domain.facts ?? {})).filter((name) => !FactsSchema.fields.some((field) => field.name === name)),
);

/** The longest value of a declared fact the broker keeps: like every fact, it is the agent's claim. */
const DECLARED_FACT_MAX_CHARS = 1024;

/**
 * `declaredFacts`: the names the domains declare, unless a test gives others.
 *
 * The wire form of a fact record: each field of the proto's Facts message
 * takes the record's value under that field's proto name, and each fact a
 * domain declares goes in `domain_facts` as a string. Other keys are not sent;
 * a missing key leaves the field at its zero.
 */
export function factsToWire(record: FactRecord, declaredFacts: ReadonlySet<string> = DECLARED_FACTS): MessageInitShape<typeof FactsSchema> {
  const wire: Record<string, unknown> = {};
  for (const field of FactsSchema.fields) {
    const value = record[field.name];
    if (value === undefined || field.fieldKind !== 'scalar') continue;
    wire[field.localName] = field.scalar === ScalarType.UINT64 ? BigInt(Number(value)) : value;
  }
  const declared = Object.entries(record).filter(([name]) => declaredFacts.has(name));
  if (declared.length) wire.domainFacts = Object.fromEntries(declared.map(([name, value]) => [name, String(value)]));
  return wire as MessageInitShape<typeof FactsSchema>;
}

/**
 * The fact record of a wire message, under the proto's field names and the
 * declared names; zero values (not stated), undeclared names and overlong
 * values are left out.
 */
export function factsFromWire(facts: Facts, declaredFacts: ReadonlySet<string> = DECLARED_FACTS): FactRecord {
  const record: FactRecord = {};
  for (const field of FactsSchema.fields) {
    if (field.fieldKind !== 'scalar') continue;
    const value = (facts as unknown as Record<string, unknown>)[field.localName];
    const plain = typeof value === 'bigint' ? Number(value) : value;
    if (plain !== '' && plain !== 0 && plain !== false && plain !== undefined) record[field.name] = plain as string | number | boolean;
  }
  for (const [name, value] of Object.entries(facts.domainFacts)) {
    if (declaredFacts.has(name) && value !== '' && value.length <= DECLARED_FACT_MAX_CHARS) record[name] = value;
  }
  return record;
}
