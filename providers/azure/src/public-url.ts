/**
 * A URL fit to publish (status, outputs, Events): the service URL a client was built with may carry
 * a SAS token as its query string (credentials `sasToken`), and an endpoint may carry user info.
 * Only scheme, host and path are kept.
 */
export function publicUrl(url: string): string {
  if (!URL.canParse(url)) return url.replace(/[?#].*$/, '');
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}
