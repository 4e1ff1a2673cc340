import type { DomainPage } from '../../page.ts';
import { findPage } from '../find-page.ts';

/** The fleet's sandboxes, as find lists them. */
export const consolePage: DomainPage = {
  path: 'sandboxes',
  label: 'Sandboxes',
  rank: 60,
  open: (context) => findPage(context, 'Sandboxes', 'sandbox', 'No sandboxes in the fleet.'),
};
