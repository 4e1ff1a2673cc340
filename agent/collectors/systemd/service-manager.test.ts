import { describe, expect, it } from 'vitest';
import { counter, timestampMs, unitName } from './service-manager.ts';

describe('what the service manager makes of systemd’s names and properties', () => {
  it('reads a name without a unit type as a service, as systemctl does', () => {
    expect(unitName('nginx')).toBe('nginx.service');
    expect(unitName('nginx.service')).toBe('nginx.service');
    expect(unitName('backup.timer')).toBe('backup.timer');
    expect(unitName('getty@tty1')).toBe('getty@tty1.service');
  });

  it('takes the unset counter (2^64 − 1) and a zero timestamp as unknown', () => {
    expect(counter(2n ** 64n - 1n)).toBeNull();
    expect(counter(123456n)).toBe(123456);
    expect(counter(7)).toBe(7);
    expect(counter('x')).toBeNull();
    expect(timestampMs(0n)).toBeNull();
    expect(timestampMs(1764790000123456n)).toBe(1764790000123);
  });
});
