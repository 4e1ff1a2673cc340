/**
 * Pan and zoom on an SVG picture by moving its viewBox: the wheel (or the + and
 * − keys) zooms around the pointer, a drag pans, 0 fits the whole picture
 * again. The picture stays vector, so its text stays sharp at any scale.
 */
export function panZoom(picture: SVGSVGElement): { zoom(factor: number): void; reset(): void } {
  const [x0, y0, w0, h0] = (picture.getAttribute('viewBox') ?? '0 0 100 100').split(/\s+/).map(Number) as [number, number, number, number];
  let box = { x: x0, y: y0, w: w0, h: h0 };
  const apply = () => picture.setAttribute('viewBox', `${box.x} ${box.y} ${box.w} ${box.h}`);
  /** Zooms by `factor` (above 1 zooms in) around a point given as fractions of the picture's size. */
  const zoom = (factor: number, fx = 0.5, fy = 0.5) => {
    const w = Math.min(w0 * 4, Math.max(w0 / 8, box.w / factor));
    const h = (w / box.w) * box.h;
    box = { x: box.x + (box.w - w) * fx, y: box.y + (box.h - h) * fy, w, h };
    apply();
  };
  const reset = () => {
    box = { x: x0, y: y0, w: w0, h: h0 };
    apply();
  };
  picture.style.cursor = 'grab';
  picture.setAttribute('tabindex', '0');
  picture.addEventListener(
    'wheel',
    (event) => {
      event.preventDefault();
      const rect = picture.getBoundingClientRect();
      zoom(event.deltaY < 0 ? 1.2 : 1 / 1.2, (event.clientX - rect.left) / rect.width, (event.clientY - rect.top) / rect.height);
    },
    { passive: false },
  );
  picture.addEventListener('keydown', (event) => {
    if (event.key === '+' || event.key === '=') zoom(1.2);
    else if (event.key === '-') zoom(1 / 1.2);
    else if (event.key === '0') reset();
  });
  let drag: { x: number; y: number; box: typeof box } | undefined;
  picture.addEventListener('pointerdown', (event) => {
    drag = { x: event.clientX, y: event.clientY, box };
    picture.setPointerCapture(event.pointerId);
    picture.style.cursor = 'grabbing';
  });
  picture.addEventListener('pointermove', (event) => {
    if (!drag) return;
    const rect = picture.getBoundingClientRect();
    const scale = drag.box.w / rect.width;
    box = { ...drag.box, x: drag.box.x - (event.clientX - drag.x) * scale, y: drag.box.y - (event.clientY - drag.y) * scale };
    apply();
  });
  const end = () => {
    drag = undefined;
    picture.style.cursor = 'grab';
  };
  picture.addEventListener('pointerup', end);
  picture.addEventListener('pointercancel', end);
  return { zoom, reset };
}
