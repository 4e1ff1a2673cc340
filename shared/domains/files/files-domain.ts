import type { Domain } from '../domain.ts';
import { fileRead, fileStat } from './files-actions.ts';
import { filesHead } from './files-head.ts';

/** The files domain whole: its head (what an agent reads at start) with its actions and report schemas. */
export const filesDomain = {
  ...filesHead,
  actions: [fileRead, fileStat],
  reports: {},
} as const satisfies Domain;
