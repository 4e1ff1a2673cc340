import { type MessageInitShape, ScalarType } from '@bufbuild/protobuf';
import { type Facts, FactsSchema } from '../gen/fleetmesh/v1/mesh_pb.ts';

/** Host facts as every part of fleetmesh sees them: snake_case keys, the proto's own field names. */
export type FactRecord = Record<string, string | number | boolean>;

/**
 * The wire form of a fact record: each field of the proto's Facts message
 * takes the record's value under that field's proto name. Keys the message
 * has no field for are not sent; a missing key leaves the field at its zero.
 */
export function factsToWire(record: FactRecord): MessageInitShape<typeof FactsSchema> {
  const wire: Record<string, unknown> = {};
  for (const field of FactsSchema.fields) {
    const value = record[field.name];
    if (value === undefined || field.fieldKind !== 'scalar') continue;
    wire[field.localName] = field.scalar === ScalarType.UINT64 ? BigInt(Number(value)) : value;
  }
  return wire as MessageInitShape<typeof FactsSchema>;
}

/** The fact record of a wire message, under the proto's field names; zero values (not stated) are left out. */
export function factsFromWire(facts: Facts): FactRecord {
  const record: FactRecord = {};
  for (const field of FactsSchema.fields) {
    const value = (facts as unknown as Record<string, unknown>)[field.localName];
    const plain = typeof value === 'bigint' ? Number(value) : value;
    if (plain !== '' && plain !== 0 && plain !== false && plain !== undefined) record[field.name] = plain as string | number | boolean;
  }
  return record;
}
