// Text a client sends that no database column can hold as sent.

/** A surrogate without its pair (matched by code unit: no `u` flag). JSON's `\ud800` escape is valid JSON, yet
 * PostgreSQL refuses it in jsonb and a driver may fail on it in text: a write with one answered 500. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True when `s` holds a lone surrogate (it is not well-formed Unicode). */
export function hasLoneSurrogate(s: string): boolean {
  return LONE_SURROGATE.test(s);
}
