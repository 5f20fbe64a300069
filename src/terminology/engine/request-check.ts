// The checks of an $expand request's values the engine makes before it expands: offset and count are non-negative
// integers within their limits (EXPAND_MAX_COUNT), the filter within EXPAND_FILTER_MAX_CHARS characters and
// EXPAND_FILTER_MAX_WORDS distinct words (a 400 that names the parameter and the setting).
import { invalid } from './errors.js';
import { prepareFilter, type PreparedFilter } from './ranking.js';
import { DEFAULT_EXPAND_LIMITS, MAX_OFFSET, type ExpandLimits, type ExpandRequest } from './types.js';

/** A request whose every value checkRequest has checked (its only maker): the engine expands it as it is. */
export interface CheckedRequest {
  readonly request: ExpandRequest;
  /** The request's filter, normalised (counting its words is part of the check); undefined when none or blank. */
  readonly filter: PreparedFilter | undefined;
}

/** Checks the values of a request the engine bounds: a 400 for the first bad one. */
export function checkRequest(request: ExpandRequest, limits: ExpandLimits): CheckedRequest {
  if (!(limits.maxUnpaged >= 0)) throw new Error('limits.maxUnpaged must be a non-negative number');
  nonNegativeInteger(request.offset, 'offset');
  nonNegativeInteger(request.count, 'count');
  const { count, offset, filter } = request;
  const maxCount = limits.maxCount ?? DEFAULT_EXPAND_LIMITS.maxCount;
  if (count !== undefined && count > maxCount) {
    throw invalid(
      `Parameter count is ${count}, more than the limit of ${maxCount} (EXPAND_MAX_COUNT): page with offset`,
      ['count'],
    );
  }
  if (offset !== undefined && offset > MAX_OFFSET) {
    throw invalid(`Parameter offset is ${offset}, more than the limit of ${MAX_OFFSET}`, ['offset']);
  }
  if (filter !== undefined && typeof filter !== 'string') throw invalid('Parameter filter must be a string');
  const maxLen = limits.maxFilterLength ?? DEFAULT_EXPAND_LIMITS.maxFilterLength;
  if (filter !== undefined && filter.length > maxLen) {
    throw invalid(
      `Parameter filter is ${filter.length} characters long, more than the limit of ${maxLen} ` +
        `(EXPAND_FILTER_MAX_CHARS)`,
      ['filter'],
    );
  }
  return { request, filter: prepareFilter(filter, limits) };
}

function nonNegativeInteger(v: unknown, name: string): void {
  if (v !== undefined && !(typeof v === 'number' && Number.isInteger(v) && v >= 0)) {
    throw invalid(`Parameter ${name} must be a non-negative integer (got ${String(v)})`, [name]);
  }
}
