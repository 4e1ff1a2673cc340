import { describe, expect, it } from 'vitest';
import { parseUpid } from './upid.ts';

describe('UPIDs', () => {
  it('reads the node, times and owner of a task', () => {
    expect(parseUpid('UPID:pve2:0003A1B2:00C0FFEE:6650F00D:qmstart:103:fleetmesh@pve!power:')).toEqual({
      node: 'pve2',
      pid: 0x3a1b2,
      pstart: 0xc0ffee,
      starttime: 0x6650f00d,
      type: 'qmstart',
      id: '103',
      user: 'fleetmesh@pve!power',
    });
    expect(parseUpid('UPID:pve1:00001234:00005678:6650F00D:aptupdate::root@pam:')).toMatchObject({ type: 'aptupdate', id: '' });
  });

  it('refuses what is not a UPID', () => {
    expect(() => parseUpid('UPID:pve1:1234:qmstart')).toThrow('is not a UPID');
    expect(() => parseUpid('UPID:../etc:00001234:00005678:6650F00D:qmstart:1:root@pam:')).toThrow('is not a UPID');
  });
});
