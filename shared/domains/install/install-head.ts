import type { DomainHead } from '../domain.ts';

/** Apps from a catalog of compose-style definitions, installed on a host through its Docker engine. */
export const installHead = {
  name: 'install',
  rank: 130,
  icon: '<path d="M12 3v12M7 10l5 5 5-5M4 17v3h16v-3"/>',
  flags: {
    'app-catalog': {
      type: 'string',
      description: "a folder of the site's own app definitions for install_app (one YAML or JSON file per app), besides the built-in catalog",
      placeholder: 'DIR',
    },
  },
} as const satisfies DomainHead;
