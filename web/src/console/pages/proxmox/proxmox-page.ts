import type { DomainPage } from '../../page.ts';
import { findPage } from '../find-page.ts';

/** The guests of the fleet's Proxmox VE clusters, as find lists them. */
export const consolePage: DomainPage = {
  path: 'guests',
  label: 'PVE guests',
  rank: 70,
  open: (context) => findPage(context, 'PVE guests', 'guest', 'No Proxmox VE guests in the fleet.'),
};
