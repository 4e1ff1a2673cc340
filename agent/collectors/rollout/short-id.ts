/** An image or container id as people read it: twelve hex digits, without `sha256:`. */
export function shortId(id: string): string {
  return id.replace(/^sha256:/, '').slice(0, 12);
}
