// Ids are UUIDs; anything else is rejected before it reaches SQL. Its own file so auth-service.ts and
// invitations.ts (which auth-service.ts uses) can both import it without an import cycle.
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when s is a UUID. */
export function isUuid(s: unknown): s is string {
  return typeof s === 'string' && UUID_RE.test(s);
}
