import { crc32, deflateSync } from 'node:zlib';

/** One panel of the chart: a series over time, drawn in its own band with its title and range. */
interface ChartPanel {
  title: string;
  values: number[];
  color: [number, number, number];
}

/** Glyphs 3 pixels wide and 5 high, row by row, for the panel titles and their numbers. */
const GLYPHS: Record<string, string> = {
  '0': '111101101101111',
  '1': '010110010010111',
  '2': '111001111100111',
  '3': '111001111001111',
  '4': '101101111001001',
  '5': '111100111001111',
  '6': '111100111101111',
  '7': '111001010010010',
  '8': '111101111101111',
  '9': '111101111001111',
  '.': '000000000000010',
  ',': '000000000010100',
  '-': '000000111000000',
  ' ': '000000000000000',
  '%': '101001010100101',
  '/': '001001010100100',
  '(': '010100100100010',
  ')': '010001001001010',
  ':': '000010000010000',
  A: '010101111101101',
  B: '110101110101110',
  C: '011100100100011',
  D: '110101101101110',
  E: '111100110100111',
  F: '111100110100100',
  G: '011100101101011',
  H: '101101111101101',
  I: '111010010010111',
  J: '001001001101010',
  K: '101101110101101',
  L: '100100100100111',
  M: '101111111101101',
  N: '110101101101101',
  O: '010101101101010',
  P: '110101110100100',
  Q: '010101101110011',
  R: '110101110101101',
  S: '011100010001110',
  T: '111010010010010',
  U: '101101101101111',
  V: '101101101101010',
  W: '101101111111101',
  X: '101101010101101',
  Y: '101101010010010',
  Z: '111001010100111',
};

const WIDTH = 960;
const PANEL_HEIGHT = 150;
const MARGIN = 12;
const SCALE = 2;

class Raster {
  readonly pixels: Buffer;
  constructor(
    readonly width: number,
    readonly height: number,
  ) {
    this.pixels = Buffer.alloc(width * height * 3, 255);
  }

  set(x: number, y: number, [r, g, b]: [number, number, number]): void {
    if (x < 0 || y < 0 || x >= this.width || y >= this.height) return;
    const at = (Math.round(y) * this.width + Math.round(x)) * 3;
    this.pixels[at] = r;
    this.pixels[at + 1] = g;
    this.pixels[at + 2] = b;
  }

  line(x0: number, y0: number, x1: number, y1: number, color: [number, number, number]): void {
    const steps = Math.max(1, Math.ceil(Math.max(Math.abs(x1 - x0), Math.abs(y1 - y0))));
    for (let i = 0; i <= steps; i++) this.set(x0 + ((x1 - x0) * i) / steps, y0 + ((y1 - y0) * i) / steps, color);
  }

  text(x: number, y: number, text: string, color: [number, number, number]): void {
    let cursor = x;
    for (const char of text.toUpperCase()) {
      const glyph = GLYPHS[char] ?? GLYPHS[' '] ?? '';
      for (let i = 0; i < 15; i++) {
        if (glyph[i] !== '1') continue;
        for (let dy = 0; dy < SCALE; dy++)
          for (let dx = 0; dx < SCALE; dx++) this.set(cursor + (i % 3) * SCALE + dx, y + Math.floor(i / 3) * SCALE + dy, color);
      }
      cursor += 4 * SCALE;
    }
  }
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** An 8-bit RGB PNG of the raster: each row behind filter byte 0, the whole deflated. */
function encodePng(raster: Raster): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(raster.width, 0);
  header.writeUInt32BE(raster.height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const rowBytes = raster.width * 3;
  const filtered = Buffer.alloc((rowBytes + 1) * raster.height);
  for (let y = 0; y < raster.height; y++) raster.pixels.copy(filtered, y * (rowBytes + 1) + 1, y * rowBytes, (y + 1) * rowBytes);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(filtered)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function label(value: number): string {
  return Math.abs(value) >= 100 || Number.isInteger(value) ? value.toFixed(0) : value.toFixed(2);
}

/** A PNG with one band per panel over a shared time axis (`elapsedS`), each scaled from 0 to its maximum. */
export function pngChart(elapsedS: number[], panels: ChartPanel[]): Buffer {
  const raster = new Raster(WIDTH, PANEL_HEIGHT * panels.length);
  const spanS = Math.max(1, elapsedS.at(-1) ?? 1);
  const grey: [number, number, number] = [190, 190, 190];
  const ink: [number, number, number] = [40, 40, 40];
  panels.forEach((panel, p) => {
    const top = p * PANEL_HEIGHT;
    const plotTop = top + 28;
    const plotBottom = top + PANEL_HEIGHT - MARGIN;
    const left = MARGIN + 60;
    const right = WIDTH - MARGIN;
    const finite = panel.values.filter(Number.isFinite);
    const max = Math.max(1e-9, ...finite) * 1.1;
    raster.line(left, plotBottom, right, plotBottom, grey);
    raster.line(left, plotTop, left, plotBottom, grey);
    raster.text(left, top + 8, `${panel.title}  (LAST ${label(finite.at(-1) ?? 0)}, MAX ${label(Math.max(0, ...finite))}, ${label(spanS)} S)`, ink);
    raster.text(MARGIN, plotTop, label(max), ink);
    raster.text(MARGIN, plotBottom - 10, '0', ink);
    let previous: [number, number] | undefined;
    panel.values.forEach((value, i) => {
      if (!Number.isFinite(value)) return;
      const x = left + ((elapsedS[i] ?? 0) / spanS) * (right - left);
      const y = plotBottom - (value / max) * (plotBottom - plotTop);
      if (previous) raster.line(previous[0], previous[1], x, y, panel.color);
      else raster.set(x, y, panel.color);
      previous = [x, y];
    });
  });
  return encodePng(raster);
}
