import { describe, expect, it } from 'vitest';
import { compareApkVersions } from './apk-version.ts';
import { compareDpkgVersions } from './dpkg-version.ts';
import { compareRpmVersions } from './rpm-version.ts';

const sign = (n: number) => Math.sign(n);

describe('each ecosystem orders its versions as its package manager does', () => {
  it('dpkg: epoch, then upstream and revision, tilde before the end, letters before other characters', () => {
    const ascending = ['1.0~rc1', '1.0', '1.0-1', '1.0-1+deb12u1', '1.0-2', '1.0a', '1.0+b1', '1.1', '1.10', '3.0.11-1~deb12u2', '3.0.15-1~deb12u1', '1:0.1'];
    for (let i = 0; i < ascending.length - 1; i++) {
      expect(sign(compareDpkgVersions(ascending[i] as string, ascending[i + 1] as string)), `${ascending[i]} < ${ascending[i + 1]}`).toBe(-1);
      expect(sign(compareDpkgVersions(ascending[i + 1] as string, ascending[i] as string))).toBe(1);
    }
    expect(compareDpkgVersions('1.01', '1.1')).toBe(0);
    expect(compareDpkgVersions('0:2.36-9', '2.36-9')).toBe(0);
  });

  it('rpm: digits newer than letters, tilde before the end, caret after it', () => {
    const ascending = ['1.0~rc1', '1.0', '1.0^git1', '1.0.a', '1.0.1', '1.0.10', '3.0.7-27.el9', '3.0.7-28.el9', '1:1.0'];
    for (let i = 0; i < ascending.length - 1; i++) {
      expect(sign(compareRpmVersions(ascending[i] as string, ascending[i + 1] as string)), `${ascending[i]} < ${ascending[i + 1]}`).toBe(-1);
    }
    expect(compareRpmVersions('1.0', '1.0-5')).toBe(0);
    expect(compareRpmVersions('1.010', '1.10')).toBe(0);
  });

  it('apk: numbers, letter, pre-release and patch suffixes, then the revision', () => {
    const ascending = ['1.2_alpha1', '1.2_rc2', '1.2', '1.2-r1', '1.2_p1', '1.2a', '1.2.1', '1.10', '3.0.15-r0', '3.3.2-r0'];
    for (let i = 0; i < ascending.length - 1; i++) {
      expect(sign(compareApkVersions(ascending[i] as string, ascending[i + 1] as string)), `${ascending[i]} < ${ascending[i + 1]}`).toBe(-1);
    }
    expect(compareApkVersions('1.2-r0', '1.2')).toBe(0);
  });
});
