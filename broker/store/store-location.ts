import { FleetError } from '../../shared/errors/fleet-error.ts';

type StoreLocation = { engine: 'sqlite'; path: string } | { engine: 'postgres'; url: string };

/** The value of `--store`: `sqlite:PATH`, or a `postgres://` (or `postgresql://`) URL; nothing means `defaultPath`. */
export function parseStoreLocation(value: string | undefined, defaultPath: string): StoreLocation {
  if (value === undefined || value === '') return { engine: 'sqlite', path: defaultPath };
  if (value.startsWith('sqlite:')) {
    const path = value.slice('sqlite:'.length);
    if (path === '') throw invalid(value, 'sqlite: needs a file path');
    return { engine: 'sqlite', path };
  }
  if (/^postgres(ql)?:\/\//.test(value)) {
    try {
      new URL(value);
    } catch {
      throw invalid(value, 'not a valid URL');
    }
    return { engine: 'postgres', url: value };
  }
  throw invalid(value, 'unknown engine');
}

function invalid(value: string, why: string): FleetError {
  const shown = value.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
  return new FleetError('invalid_argument', `--store ${shown}: ${why}`, {
    hint: 'Give --store sqlite:PATH (the default is the file in --data-dir) or --store postgres://USER:PASSWORD@HOST:5432/DB.',
  });
}
