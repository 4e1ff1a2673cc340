import { svg } from '../dom.ts';

const WIDTH = 80;
const HEIGHT = 20;

/**
 * A line of a figure over time, small enough for a table cell: the points
 * scaled between the lowest and highest value (so a flat series is a flat
 * line in the middle), gaps where the history has none. The element carries
 * how many points it holds (`data-points`) and says its last value to a
 * screen reader through `label`.
 */
export function usageSparkline(points: readonly (number | null)[], label: string): SVGElement {
  const values = points.filter((v): v is number => v !== null);
  const low = Math.min(...values);
  const high = Math.max(...values);
  const step = points.length > 1 ? WIDTH / (points.length - 1) : 0;
  const y = (v: number) => (high === low ? HEIGHT / 2 : HEIGHT - 1 - ((v - low) / (high - low)) * (HEIGHT - 2));
  // One path, a move wherever a gap ends: the line is broken where no sample was kept.
  let d = '';
  let drawing = false;
  points.forEach((v, i) => {
    if (v === null) {
      drawing = false;
      return;
    }
    d += `${drawing ? 'L' : 'M'}${(i * step).toFixed(1)},${y(v).toFixed(1)}`;
    drawing = true;
  });
  // A single point is a dot, not nothing.
  const dots = values.length === 1 ? [svg('circle', { cx: (points.findIndex((v) => v !== null) * step).toFixed(1), cy: HEIGHT / 2, r: 1.5 })] : [];
  return svg(
    'svg',
    {
      class: 'usage-sparkline',
      viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
      width: WIDTH,
      height: HEIGHT,
      role: 'img',
      'aria-label': label,
      'data-points': values.length,
    },
    svg('path', { d }),
    ...dots,
  );
}
