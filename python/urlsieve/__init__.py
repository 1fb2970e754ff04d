"""urlsieve: a fast, small and (optionally) exact URL-seen test.

    import urlsieve
    with urlsieve.SeenFilter(capacity=1_000_000, fp_rate=1e-6) as seen:
        seen.insert_if_new("http://Example.com/a#top")    # True
        seen.insert_if_new("HTTP://example.com:80/a")     # False: the same canonical URL
        seen.insert_many(["http://example.com/b", "http://example.com/a"])  # [True, False]

SeenFilter(*, capacity=10_000_000, fp_rate=1e-3, state_dir=None, exact=False,
           max_url_length=2083, rebuild_bloom=False, redis=None, name=None,
           redis_front_cache_keys=DEFAULT_REDIS_FRONT_CACHE_KEYS, deletable=False, **rules)
    capacity/fp_rate size the Bloom filter (it grows past capacity, keeping the bound). state_dir
    makes the filter persistent (created, or reopened with its stored parameters); it is locked
    until close(): another process opening it gets urlsieve.Error naming this one's pid. exact=True
    (needs state_dir) confirms every Bloom "maybe seen" in SQLite: no new URL is ever reported as
    seen. rebuild_bloom=True rebuilds an exact state's Bloom filter from its SQLite store (the only
    way past a missing, stale or corrupt bloom.snap, which is otherwise an error). rules: the
    opt-in canonicalization rules, each a bool keyword named in urlsieve.CANONICALIZE_RULES
    (sort_query=True, strip_www=True, ...), all False by default; any other keyword is a TypeError.
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

Errors: ValueError for bad input or options, OSError for I/O, urlsieve.Error (a RuntimeError) for
corrupt or foreign state and other failures, urlsieve.UnavailableError (a urlsieve.Error) when a
Redis server cannot be reached.
"""

from ._core import (CANONICALIZE_RULES, DEFAULT_REDIS_FRONT_CACHE_KEYS, Error, SeenFilter,
                    UnavailableError, __version__)

__all__ = ["CANONICALIZE_RULES", "DEFAULT_REDIS_FRONT_CACHE_KEYS", "Error", "SeenFilter", "UnavailableError", "__version__"]
