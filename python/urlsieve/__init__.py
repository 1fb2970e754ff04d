"""urlsieve: a fast, small and (optionally) exact URL-seen test, and a content-seen test.

    import urlsieve
    with urlsieve.SeenFilter(capacity=1_000_000, fp_rate=1e-6) as seen:
        seen.insert_if_new("http://Example.com/a#top")    # True
        seen.insert_if_new("HTTP://example.com:80/a")     # False: the same canonical URL
        seen.insert_many(["http://example.com/b", "http://example.com/a"])  # [True, False]

SeenFilter(*, capacity=10_000_000, fp_rate=1e-3, state_dir=None, exact=False,
           max_url_length=2083, rebuild_bloom=False, redis=None, name=None,
           redis_front_cache_keys=DEFAULT_REDIS_FRONT_CACHE_KEYS, deletable=False,
           tracking_exceptions=None, **rules)
    capacity/fp_rate size the Bloom filter (it grows past capacity, keeping the bound). state_dir
    makes the filter persistent (created, or reopened with its stored parameters); it is locked
    until close(): another process opening it gets urlsieve.Error naming this one's pid. exact=True
    (needs state_dir) confirms every Bloom "maybe seen" in SQLite: no new URL is ever reported as
    seen. rebuild_bloom=True rebuilds an exact state's Bloom filter from its SQLite store (the only
    way past a missing, stale or corrupt bloom.snap, which is otherwise an error). rules: the
    opt-in canonicalization rules, each a bool keyword named in urlsieve.CANONICALIZE_RULES
    (sort_query=True, strip_www=True, ...), all False by default; any other keyword is a TypeError.
    strip_tracking_params=True removes known tracking parameters (utm_*, fbclid, gclid, ...) from
    the key; tracking_exceptions=["example.com:ref", ...] keeps NAME on HOST and the hosts under
    it (ValueError for a malformed one). A state keeps the rule and its exceptions.
    redis="redis://[[user]:password@]host:port[/db]", name="NAME": a seen set shared in Redis by
    every process and thread that opens the same name there; exactly one of them is told a URL is
    new. Both or neither; not with state_dir or rebuild_bloom (ValueError); exact=True needs no
    state_dir there. The first open creates the set with the given capacity, fp_rate, exact and
    rules; later opens use the stored ones (notices says so). redis_front_cache_keys: keys this
    process knows are in the set, answered without a round trip (0: none). A Redis fault raises,
    never answers "seen": urlsieve.UnavailableError when the server is unreachable, restarting or
    timing out (retry later; it reconnects by itself), urlsieve.Error otherwise (a wrong password,
    a name holding something else), each naming the server. deletable=True: a Bloom-only filter
    keeps 4-bit counters (4x the memory) so that forget() works; stored with a state_dir.

    insert_if_new(url) -> bool       url: str or bytes. ValueError (with the reason) if invalid.
    insert_many(urls, *, invalid="raise") -> list
        urls: any iterable of str/bytes; one call into C++ for the whole batch, without the GIL.
        A URL repeated in the batch is new only at its first occurrence. invalid="raise": an
        invalid URL raises ValueError naming its index, and nothing of the batch is inserted;
        invalid="none": its slot is None and the others are inserted. The URLs are not copied
        (about 24 bytes per URL of bookkeeping); feed a huge stream in batches (e.g. 100 000).
    url in seen -> bool              does not insert; ValueError if invalid.
    canonicalize(url) -> str         the key that is deduplicated.
    forget(url) -> bool              forgets the URL (its next insert is new); True if it was
        there. urlsieve.Error for a plain Bloom filter: forgetting needs exact=True or
        deletable=True. Durable as inserts are (save(), close()).
    insert_key_if_new(key) -> bool   a raw key, not canonicalized (see urlsieve.scrapy).
    stats() -> dict, notices, state_dir, redis_name, closed, save(), close(); `with` closes (and
    saves; over Redis every insert is in Redis when it returns, so there is nothing to save).

The content-seen test (docs/features/content-seen.md, "For embedders"): has a page's content been
seen before, under any URL?

    with urlsieve.ContentSeenSet(max_distance=3) as pages:
        v = pages.test(body, visible_text, url, data="warc-offset-123")
        if v.kind == "exact": ...      # the same bytes as v.first_id (v.first_data: its data)
        elif v.kind == "near": ...     # visible text within v.distance bits of v.first_id's

simhash(text, shingle_words=3) -> int     Charikar's 64-bit SimHash of a text (str or UTF-8 bytes):
    words are runs of letters and digits (ASCII lowercased; a word with a digit is dropped: dates,
    counters, tokens), features the shingles of shingle_words (1..16) consecutive words; 0 for a
    text without a word. Near-duplicates are within 3 bits of 64 (Manku et al.). The construction
    is dedup/content/simhash.h's, to the bit.
hamming_distance(a, b) -> int             bits in which two 64-bit ints differ.
payload_digest(body) -> int               XXH3-64 of the bytes (a str: of its UTF-8).
warc_payload_digest("sha1:...") -> int | None
    the first 8 bytes of a WARC-Payload-Digest's SHA-1: the digests the crawler's sets hold.

ContentSeenSet(max_distance=3, near=True, *, shingle_words=3, redis=None, name=None)
    A content-seen set: in this process (nothing is saved), or with redis="redis://..." and
    name="NAME" shared in Redis by every process that opens that name there (of two pages with one
    fingerprint tested at once anywhere, exactly one is "first"; the set keeps the max_distance
    and near it was created with, another is urlsieve.Error). near=False: the exact test only.
    test(body, text, id, data="") -> ContentVerdict
        body: the page's bytes (digest: payload_digest(body)); text: its visible text, or None
        (no near test); id: who the page is (a URL: 1..4096 bytes without NUL); data: what to get
        back with a later copy (<= 4096 bytes, str or bytes). "exact": a page with these bytes was
        recorded; "near": else a recorded page's text is within max_distance bits; "first": else,
        and the page is recorded (refetch=True: it is the recorded page itself, same id). A near
        page's digest is recorded too, under its own id. The digest and the simhash are computed
        and the set asked with the GIL released.
    test_fingerprint(digest, simhash, id, data="") -> ContentVerdict   (simhash may be None)
    forget(body, text, id) / forget_fingerprint(digest, simhash, id) -> bool
        removes what is recorded for that page under that id (its next test is "first").
    len(set): digests recorded; max_distance, near, shingle_words, redis_name, closed, close();
    `with` closes.
ContentVerdict: kind ("first", "exact", "near"), duplicate (kind != "first"), refetch, first_id,
    first_data (str; bytes when the stored data is not UTF-8), distance (near), digest and simhash
    (the tested page's, for forget_fingerprint).
NearDuplicateIndex(max_distance=3)
    64-bit fingerprints with a value each (0 .. 2**48 - 1), answering "is one within
    max_distance bits?" (Manku's k+1 permuted tables, about 34 bytes a fingerprint at k = 3).
    find(fp) -> (fingerprint, value, distance) | None (the nearest; the first inserted of equals),
    insert(fp, value), find_or_insert(fp, value) (inserts when find finds nothing; returns what
    find returned), erase(fp, value) -> bool, len(index), memory_bytes, max_distance. Not for
    concurrent use from threads without the GIL held (each call holds it).

Errors: ValueError for bad input or options, OSError for I/O, urlsieve.Error (a RuntimeError) for
corrupt or foreign state and other failures, urlsieve.UnavailableError (a urlsieve.Error) when a
Redis server cannot be reached.
"""

from ._core import (CANONICALIZE_RULES, DEFAULT_REDIS_FRONT_CACHE_KEYS, ContentSeenSet,
                    ContentVerdict, Error, NearDuplicateIndex, SeenFilter, UnavailableError,
                    __version__, hamming_distance, payload_digest, simhash, warc_payload_digest)

__all__ = ["CANONICALIZE_RULES", "DEFAULT_REDIS_FRONT_CACHE_KEYS", "ContentSeenSet",
           "ContentVerdict", "Error", "NearDuplicateIndex", "SeenFilter", "UnavailableError",
           "__version__", "hamming_distance", "payload_digest", "simhash", "warc_payload_digest"]
