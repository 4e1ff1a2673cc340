import type { Domain } from '../../../shared/domains/domain.ts';
import { DOMAINS } from '../../../shared/domains/domains.ts';

/** The name the product's own icon is served under; no domain is called that. */
export const PRODUCT_ICON = 'fleetmesh';

/** The product's drawing: a hub meshed to four hosts. */
const PRODUCT_DRAWING =
  '<circle cx="12" cy="12" r="3"/><circle cx="4" cy="5" r="2"/><circle cx="20" cy="5" r="2"/><circle cx="4" cy="19" r="2"/><circle cx="20" cy="19" r="2"/><path d="M5.5 6.5l4.2 3.6M18.5 6.5l-4.2 3.6M5.5 17.5l4.2-3.6M18.5 17.5l-4.2-3.6"/>';

/** Every icon the broker serves, by the name in its path: each domain's drawing and the product's. */
export const ICON_DRAWINGS: ReadonlyMap<string, string> = new Map([
  ...DOMAINS.map((domain: Domain) => [domain.name, domain.icon] as const),
  [PRODUCT_ICON, PRODUCT_DRAWING],
]);

/** A drawing as the SVG document served for it. */
export function svgDocument(drawing: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="24" height="24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round">${drawing}</svg>\n`;
}
