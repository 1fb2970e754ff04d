"""urlsieve: a fast, small and (optionally) exact URL-seen test.

    import urlsieve
    with urlsieve.SeenFilter(capacity=1_000_000, fp_rate=1e-6) as seen:
        seen.insert_if_new("http://Example.com/a#top")    # True
        seen.insert_if_new("HTTP://example.com:80/a")     # False: the same canonical URL
        seen.insert_many(["http://example.com/b", "http://example.com/a"])  # [True, False]

SeenFilter(*, capacity=10_000_000, fp_rate=1e-3, state_dir=None, exact=False,
           max_url_length=2083, rebuild_bloom=False, **rules)
    capacity/fp_rate size the Bloom filter (it grows past capacity, keeping the bound). state_dir
    makes the filter persistent (created, or reopened with its stored parameters); it is locked
    until close(): another process opening it gets urlsieve.Error naming this one's pid. exact=True
    (needs state_dir) confirms every Bloom "maybe seen" in SQLite: no new URL is ever reported as
    seen. rebuild_bloom=True rebuilds an exact state's Bloom filter from its SQLite store (the only
    way past a missing, stale or corrupt bloom.snap, which is otherwise an error). rules: the
    opt-in canonicalization rules, each a bool keyword named in urlsieve.CANONICALIZE_RULES
    (sort_query=True, strip_www=True, ...), all False by default; any other keyword is a TypeError.

    insert_if_new(url) -> bool       url: str or bytes. ValueError (with the reason) if invalid.
    insert_many(urls, *, invalid="raise") -> list
        urls: any iterable of str/bytes; one call into C++ for the whole batch, without the GIL.
        A URL repeated in the batch is new only at its first occurrence. invalid="raise": an
        invalid URL raises ValueError naming its index, and nothing of the batch is inserted;
        invalid="none": its slot is None and the others are inserted. The URLs are not copied
        (about 24 bytes per URL of bookkeeping); feed a huge stream in batches (e.g. 100 000).
    url in seen -> bool              does not insert; ValueError if invalid.
    canonicalize(url) -> str         the key that is deduplicated.
    insert_key_if_new(key) -> bool   a raw key, not canonicalized (see urlsieve.scrapy).
    stats() -> dict, notices, state_dir, closed, save(), close(); `with` closes (and saves).

Errors: ValueError for bad input or options, OSError for I/O, urlsieve.Error (a RuntimeError) for
corrupt or foreign state and other failures.
"""

from ._core import CANONICALIZE_RULES, Error, SeenFilter, __version__

__all__ = ["CANONICALIZE_RULES", "Error", "SeenFilter", "__version__"]
