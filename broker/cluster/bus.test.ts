import { describe, expect, it } from 'vitest';
import { parseBusUrl } from './bus.ts';

describe('the --bus URL', () => {
  it('takes servers, and a user and password or a token from the URL', () => {
    expect(parseBusUrl('nats://nats:4222')).toEqual({ servers: ['nats://nats:4222'], tls: false });
    expect(parseBusUrl('nats://fm:s%40cret@nats:4222,nats://nats-2:4222')).toEqual({
      servers: ['nats://nats:4222', 'nats://nats-2:4222'],
      tls: false,
      user: 'fm',
      pass: 's@cret',
    });
    expect(parseBusUrl('nats://t0ken@nats:4222')).toEqual({ servers: ['nats://nats:4222'], tls: false, token: 't0ken' });
    expect(parseBusUrl('tls://nats:4222')).toEqual({ servers: ['tls://nats:4222'], tls: true });
  });

  it('refuses what is not a nats:// or tls:// URL, naming the flag', () => {
    expect(() => parseBusUrl('redis://x:6379')).toThrow(/--bus must be a nats:\/\/ or tls:\/\/ URL/);
    expect(() => parseBusUrl('nats-server')).toThrow(/--bus "nats-server" is not a URL/);
  });
});
