import { describe, expect, it } from 'vitest';
import { PathGlob } from './path-glob.ts';

describe('an operator path glob', () => {
  it('matches * within a name, ? as one character and ** at any depth, the directory itself included', () => {
    const tree = new PathGlob('/etc/nginx/**');
    expect(['/etc/nginx', '/etc/nginx/nginx.conf', '/etc/nginx/sites-enabled/default'].map((path) => tree.matches(path))).toEqual([true, true, true]);
    expect(['/etc', '/etc/nginx-old/x', '/etc/nginxx'].map((path) => tree.matches(path))).toEqual([false, false, false]);
    const confs = new PathGlob('/var/www/*.conf');
    expect(['/var/www/a.conf', '/var/www/sub/a.conf', '/var/www/a.conf.bak'].map((path) => confs.matches(path))).toEqual([true, false, false]);
    expect(new PathGlob('/srv/app-?/log').matches('/srv/app-1/log')).toBe(true);
    expect(new PathGlob('/srv/**/app.yml').matches('/srv/a/b/c/app.yml')).toBe(true);
    expect(new PathGlob('/srv/**/app.yml').matches('/srv/app.yml')).toBe(true);
  });

  it('reaches a name starting with a dot only through a segment that starts with one', () => {
    expect(new PathGlob('/etc/app/**').matches('/etc/app/.htpasswd')).toBe(false);
    expect(new PathGlob('/etc/app/*').matches('/etc/app/.env')).toBe(false);
    expect(new PathGlob('/etc/app/**').matches('/etc/app/.git/config')).toBe(false);
    expect(new PathGlob('/etc/app/.env').matches('/etc/app/.env')).toBe(true);
    expect(new PathGlob('/etc/app/.*').matches('/etc/app/.env')).toBe(true);
  });

  it('reads regular-expression characters as themselves', () => {
    const glob = new PathGlob('/opt/a+b/(x)|y.$');
    expect(glob.matches('/opt/a+b/(x)|y.$')).toBe(true);
    expect(glob.matches('/opt/aab/(x)|y.$')).toBe(false);
  });

  it('refuses a relative glob, . and .. segments, classes, braces and a ** inside a name, naming the glob', () => {
    for (const text of ['etc/nginx/**', '/etc/../root/**', '/etc/./x', '/etc//x', '/etc/[ab]', '/etc/{a,b}', '/etc/a**', '/etc/a\\*']) {
      expect(() => new PathGlob(text), text).toThrow(`--file-paths "${text}"`);
    }
  });

  it('knows its fixed leading directory, and can be moved to where that directory really is', () => {
    expect(new PathGlob('/var/run/app/*.pid').base).toBe('/var/run/app');
    expect(new PathGlob('/**').base).toBe('/');
    expect(new PathGlob('/etc/hosts').base).toBe('/etc/hosts');
    expect(new PathGlob('/var/run/app/*.pid').rebased('/run/app').text).toBe('/run/app/*.pid');
    expect(new PathGlob('/etc/resolv.conf').rebased('/run/resolve/stub.conf').text).toBe('/run/resolve/stub.conf');
  });
});
