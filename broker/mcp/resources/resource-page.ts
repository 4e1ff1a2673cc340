import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';

/**
 * One page of a list and the cursor of the next (none on the last page). The
 * cursor is opaque to clients; one this server did not give is invalid params.
 */
export function pageOf<T>(all: readonly T[], cursor: string | undefined, size: number): { items: T[]; nextCursor?: string } {
  const offset = cursor === undefined ? 0 : Number(Buffer.from(cursor, 'base64url').toString());
  if (!Number.isInteger(offset) || offset < 0 || offset > all.length)
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'that cursor is not one this server gave');
  const next = offset + size;
  return { items: all.slice(offset, next), ...(next < all.length ? { nextCursor: Buffer.from(String(next)).toString('base64url') } : {}) };
}
