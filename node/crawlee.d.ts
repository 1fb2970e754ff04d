// Type declarations of `urlsieve/crawlee` (crawlee.js). Crawlee's own types are used loosely so
// that this package does not require crawlee to type-check.
import type { SeenFilter } from './index';

export interface RequestLike {
  url: string;
  method?: string;
  payload?: string | Buffer;
  uniqueKey?: string;
}

/** The key urlsieve deduplicates for a request, or null when urlsieve rejects its URL. */
export function requestKey(seen: SeenFilter, request: string | RequestLike): string | null;

/** A transformRequestFunction for enqueueLinks: false for a request the seen set holds. */
export function seenTransform<T extends RequestLike>(
  seen: SeenFilter, then?: (request: T) => T | false | undefined | null,
): (request: T) => T | false | undefined | null;

/** The queue, whose adds admit only requests the seen set calls new. */
export function seenRequestQueue<Q extends object>(
  queue: Q, seen: SeenFilter, tracker?: { begin(): void; end(): void },
): Q;

export interface SeenCrawlerOptions {
  seen: SeenFilter;
  /** Save a persistent seen set every this many handled pages (and when run() ends). Default 100. */
  saveEvery?: number;
  /** Awaited after each save, while no page is in flight. */
  onSave?: () => Promise<void> | void;
}

/** A crawler of class Crawler (e.g. CheerioCrawler) with urlsieve as its seen stage. */
export function createSeenCrawler<C>(
  Crawler: new (options: any) => C, options: Record<string, any>, seenOptions: SeenCrawlerOptions,
): Promise<C>;
