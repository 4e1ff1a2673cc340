import { describe, expect, it } from 'vitest';
import { parseImageReference, withTag } from './image-reference.ts';

describe('parseImageReference', () => {
  it('reads the registry as the engine does: a first part with a dot, a port or localhost, else Docker Hub', () => {
    expect(parseImageReference('nginx')).toMatchObject({ registry: 'docker.io', repository: 'library/nginx', tag: undefined, text: 'nginx:latest' });
    expect(parseImageReference('team/app:2')).toMatchObject({ registry: 'docker.io', repository: 'team/app', tag: '2', text: 'team/app:2' });
    expect(parseImageReference('127.0.0.1:5000/shop/web:1.2')).toMatchObject({ registry: '127.0.0.1:5000', repository: 'shop/web', tag: '1.2' });
    expect(parseImageReference('localhost/app')).toMatchObject({ registry: 'localhost', repository: 'app', text: 'localhost/app:latest' });
    expect(parseImageReference('registry.example.com/app')).toMatchObject({ registry: 'registry.example.com', repository: 'app' });
    const digest = `sha256:${'a'.repeat(64)}`;
    expect(parseImageReference(`app@${digest}`)).toMatchObject({ repository: 'library/app', tag: undefined, digest, text: `app@${digest}` });
  });

  it('refuses what is not a reference before the engine sees it: a leading dash, spaces, upper case, a bad tag', () => {
    for (const bad of ['-rm', 'app name', 'App:1', 'app:-x', 'app@sha256:zz', '', 'a//b']) {
      expect(() => parseImageReference(bad), bad).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    }
  });

  it('moves a reference to another tag, dropping a pinned digest', () => {
    expect(withTag(parseImageReference('127.0.0.1:5000/shop/web:1'), '2').text).toBe('127.0.0.1:5000/shop/web:2');
    expect(withTag(parseImageReference('web'), '2').text).toBe('web:2');
    expect(withTag(parseImageReference(`web:1@sha256:${'b'.repeat(64)}`), '3').text).toBe('web:3');
  });
});
