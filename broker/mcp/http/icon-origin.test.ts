import { describe, expect, it } from 'vitest';
import { iconOrigin } from './icon-origin.ts';

describe('iconOrigin', () => {
  it("takes the public URL's origin when one is set, else the request's", () => {
    expect(iconOrigin('https://fleet.example/mcp', 'http://127.0.0.1:7400/mcp')).toBe('https://fleet.example');
    expect(iconOrigin(undefined, 'http://localhost:7400/mcp')).toBe('http://localhost:7400');
  });
});
