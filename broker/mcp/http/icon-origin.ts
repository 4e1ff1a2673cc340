/**
 * The origin icon URLs are built on: the public URL's when one is set (a
 * proxy in front may speak HTTPS), else the request's own, whose Host header
 * the host guard has already checked.
 */
export function iconOrigin(publicUrl: string | undefined, requestUrl: string): string {
  return new URL(publicUrl ?? requestUrl).origin;
}
