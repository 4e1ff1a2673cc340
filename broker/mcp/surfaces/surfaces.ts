import { dynamicSurface } from './dynamic-surface.ts';
import { individualSurface } from './individual-surface.ts';
import { metaSurface } from './meta-surface.ts';
import type { Surface, SurfaceName } from './surface.ts';

export const SURFACES: Record<SurfaceName, Surface> = {
  individual: individualSurface,
  meta: metaSurface,
  dynamic: dynamicSurface,
};
