// Type declarations of the npm package `urlsieve` (index.js and the native addon, src/).

/** The opt-in canonicalization rules (all false by default), as SeenFilter options. */
export type CanonicalizeRule =
  | 'sortQuery' | 'dropEmptyQuery' | 'stripSessionIds' | 'stripWww' | 'collapseSlashes'
  | 'stripTrackingParams';

export interface SeenFilterOptions {
  /** URLs at which fpRate still holds (the filter grows past it). Default 10 000 000. */
  capacity?: number;
  /** Bloom false-positive bound, in (0, 1). Default 1e-3. */
  fpRate?: number;
  /** A persistent state directory (created, or reopened with its stored parameters; locked). */
  stateDir?: string | null;
  /** SQLite confirms every Bloom "maybe seen": no new URL is reported seen (needs stateDir or redis). */
  exact?: boolean;
  /** Longer URLs are invalid. Default 2083. */
  maxUrlLength?: number;
  /** Rebuild an exact state's Bloom filter from its SQLite store. */
  rebuildBloom?: boolean;
  /** A set shared in Redis: "redis://[[user]:password@]host:port[/db]" (with name). */
  redis?: string | null;
  /** The Redis set's name, 1-64 of [A-Za-z0-9_.-] (with redis). */
  name?: string | null;
  /** Take the Redis password from this environment variable (the URL must carry none). */
  redisPasswordEnv?: string;
  /** Keys known to be in the Redis set, answered without a round trip. Default 2^20; 0: none. */
  redisFrontCacheKeys?: number;
  /** A URL told new longer ago is new again: seconds, or a duration such as "7d". null/0: never. */
  revisitAfter?: number | string | null;
  /** Generations of a time-aware Bloom filter (1-256). Default 4. */
  generations?: number;
  /** A Bloom-only filter with 4-bit counters (4x the memory), so that forget() works. */
  deletable?: boolean;
  sortQuery?: boolean;
  dropEmptyQuery?: boolean;
  stripSessionIds?: boolean;
  stripWww?: boolean;
  collapseSlashes?: boolean;
  /** Remove known tracking query parameters (utm_*, fbclid, gclid, msclkid, ...) from the key. */
  stripTrackingParams?: boolean;
  /** With stripTrackingParams: "HOST:NAME" keeps the parameter NAME on HOST and the hosts under it. */
  trackingExceptions?: string[] | null;
}

export interface SeenStats {
  capacity: number;
  fpRate: number;
  exact: boolean;
  deletable: boolean;
  generation: number;
  bloomInserted: number;
  bloomCapacity: number;
  bloomLayers: number;
  bloomBytes: number;
  bloomFillRatio: number;
  bloomExpectedFpRate: number;
  bloomBitsPerKey: number;
  storedKeys: number;
  maybeLookups: number;
  falsePositives: number;
  /** Seconds; 0: URLs are never new again. */
  revisitAfter: number;
  generations: number;
  liveGenerations: number;
}

/** Status codes of the C++ library (the C API's URLSIEVE_* names without the prefix). */
export type ErrorCode =
  | 'INVALID_ARGUMENT' | 'NOT_FOUND' | 'CORRUPTION' | 'IO_ERROR' | 'FAILED_PRECONDITION'
  | 'UNSUPPORTED' | 'UNAVAILABLE' | 'ERR_INVALID_ARG_TYPE';

/** Every error thrown or rejected by urlsieve is an Error (a TypeError for a wrong argument type). */
export interface UrlsieveError extends Error {
  code: ErrorCode;
}

export class SeenFilter {
  /** Opens or creates the filter (synchronously; over Redis it connects). */
  constructor(options?: SeenFilterOptions);
  /** True the first time the URL's canonical form is inserted. INVALID_ARGUMENT for a bad URL. */
  insertIfNew(url: string): boolean;
  /**
   * One verdict per URL, computed off the event loop. A URL repeated in the batch is new at its
   * first occurrence only. invalid "throw" (default): a bad URL rejects naming its index and nothing
   * is inserted; "null": its verdict is null and the others are inserted.
   */
  insertMany(urls: readonly string[], options?: { invalid?: 'throw' }): Promise<boolean[]>;
  insertMany(urls: readonly string[], options: { invalid: 'null' }): Promise<(boolean | null)[]>;
  /** A raw key, not canonicalized (must not start with http:// or https://). */
  insertKeyIfNew(key: string): boolean;
  /** Does not insert. */
  contains(url: string): boolean;
  /** The URL is new again; true if it was there. UNSUPPORTED for a plain Bloom filter. */
  forget(url: string): boolean;
  /** The key that is deduplicated. */
  canonicalize(url: string): string;
  stats(): SeenStats;
  /** Makes every insert so far durable (a no-op in memory and over Redis), off the event loop. */
  save(): Promise<void>;
  /** Saves (a persistent filter) and releases it; FAILED_PRECONDITION while a batch or save is pending. */
  close(): void;
  /** Notes from opening: stored parameters that override the requested ones, a rebuild. */
  readonly notices: string[];
  readonly stateDir: string | null;
  readonly redisName: string | null;
  readonly closed: boolean;
}

export const CANONICALIZE_RULES: readonly CanonicalizeRule[];
export const DEFAULT_REDIS_FRONT_CACHE_KEYS: number;
/** The package's version (the CMake project's). */
export const version: string;
