import { describe, expect, it } from 'vitest';
import { ptrAnswers, ptrQuery } from './mdns-name.ts';

/** A response as a responder sends it: the question echoed, one PTR answer whose owner name points back at it. */
function response(ip: string, name: string): Buffer {
  const query = ptrQuery(ip, 7);
  const header = Buffer.from(query.subarray(0, 12));
  header.writeUInt16BE(0x8400, 2);
  header.writeUInt16BE(1, 6);
  const target = Buffer.concat([...name.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])), Buffer.from([0])]);
  const record = Buffer.alloc(10);
  record.writeUInt16BE(12, 0);
  record.writeUInt16BE(1, 2);
  record.writeUInt32BE(120, 4);
  record.writeUInt16BE(target.length, 8);
  return Buffer.concat([header, query.subarray(12), Buffer.from([0xc0, 12]), record, target]);
}

describe('multicast DNS names', () => {
  it('asks for the reverse name of an address', () => {
    expect(ptrQuery('10.1.2.3', 1).toString('latin1')).toContain('\x013\x012\x011\x0210\x07in-addr\x04arpa\x00');
  });

  it('reads the address and the name from a PTR answer with a compressed owner name', () => {
    expect(ptrAnswers(response('10.1.2.3', 'nas.local'))).toEqual([{ ip: '10.1.2.3', name: 'nas.local' }]);
  });
});
