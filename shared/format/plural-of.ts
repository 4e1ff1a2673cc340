/** A resource type's plural as a reader writes it: sandbox → sandboxes, service → services. */
export function pluralOf(noun: string): string {
  return /(s|x|z|ch|sh)$/.test(noun) ? `${noun}es` : `${noun}s`;
}
