import { describe, expect, it } from 'vitest';
import { SecretRedactor } from './secret-redactor.ts';

function redact(lines: string[]): { lines: string[]; count: number } {
  const redactor = new SecretRedactor();
  return { lines: lines.map((line) => redactor.line(line)), count: redactor.count };
}

describe('the secret redactor', () => {
  it('hides values of keys named like secrets in env, INI, YAML and JSON lines, keeping the keys and quotes', () => {
    expect(
      redact([
        'DB_PASSWORD=hunter2',
        'api_key = "abc123"',
        'client_secret: s3cr3t',
        '  "auth_token": "eyJhbGciOi", "user": "app"',
        'requirepass foobared',
        'password "two words";',
      ]).lines,
    ).toEqual([
      'DB_PASSWORD=[redacted]',
      'api_key = "[redacted]"',
      'client_secret: [redacted]',
      '  "auth_token": "[redacted]", "user": "app"',
      'requirepass [redacted]',
      'password "[redacted]";',
    ]);
  });

  it('leaves configuration that only looks near a secret alone', () => {
    const plain = ['proxy_pass http://backend:8080;', 'listen 443 ssl;', '# set the password below', 'password:', 'bypass = true', 'DB_USER=app'];
    expect(redact(plain)).toEqual({ lines: plain, count: 0 });
  });

  it('hides URL passwords, header credentials and tokens of a known shape', () => {
    expect(
      redact([
        'url = postgres://app:hunter2@db:5432/app',
        'Authorization: Bearer abcdefghijklmnop',
        'aws AKIAIOSFODNN7EXAMPLE here',
        `token ghp_${'a'.repeat(36)}`,
      ]).lines,
    ).toEqual(['url = postgres://app:[redacted]@db:5432/app', 'Authorization: Bearer [redacted]', 'aws [redacted] here', 'token [redacted]']);
  });

  it('hides the body of a private key between its markers, and counts each value once', () => {
    const { lines, count } = redact([
      '-----BEGIN OPENSSH PRIVATE KEY-----',
      'b3BlbnNzaC1rZXktdjEAAAAABG5vbmU',
      'AAAAC3NzaC1lZDI1NTE5AAAAIG',
      '-----END OPENSSH PRIVATE KEY-----',
      'after=1',
      '"key": "-----BEGIN PRIVATE KEY-----\\nMIIEv\\n-----END PRIVATE KEY-----\\n"',
    ]);
    expect(lines).toEqual([
      '-----BEGIN OPENSSH PRIVATE KEY-----',
      '[redacted]',
      '[redacted]',
      '-----END OPENSSH PRIVATE KEY-----',
      'after=1',
      '"key": "-----BEGIN PRIVATE KEY-----[redacted]-----END PRIVATE KEY-----\\n"',
    ]);
    expect(count).toBe(2);
  });
});
