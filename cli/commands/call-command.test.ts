import { describe, expect, it } from 'vitest';
import { forTheCommandLine } from './call-command.ts';

describe('fleetmesh call text', () => {
  it('names the --confirm flag where the broker asks for confirm: true', () => {
    const refused = { isError: true, content: [], structuredContent: { error: { code: 'confirm_required' } } };
    expect(forTheCommandLine(refused, 'Next: Nothing was changed. Call again with confirm: true to go ahead.')).toBe(
      'Next: Nothing was changed. Call again with --confirm to go ahead.',
    );
  });

  it('leaves any other answer as the broker wrote it', () => {
    const answered = { content: [], structuredContent: { note: 'confirm: true' } };
    expect(forTheCommandLine(answered, 'a container label says confirm: true')).toBe('a container label says confirm: true');
  });
});
