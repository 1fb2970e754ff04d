/* urlsieve.h: the C API of the seen stage (SeenFilter, dedup/seen_filter.h) and of the
 * content-seen test (ContentSeenFilter, dedup/content_seen_filter.h; urlsieve_content_*, below),
 * for C programs and for bindings from other languages. Plain C89 plus <stddef.h>/<stdint.h> types;
 * no C++ type or exception crosses it (the implementation, urlsieve_c.cc, catches everything at the
 * boundary).
 *
 *   urlsieve_options opt;
 *   urlsieve_filter* f;
 *   urlsieve_error err;
 *   int is_new;
 *   urlsieve_options_init(&opt);
 *   opt.capacity = 1000000;
 *   if (urlsieve_open(&opt, &f, &err) != URLSIEVE_OK) { fprintf(stderr, "%s\n", err.message); }
 *   urlsieve_insert_if_new(f, url, strlen(url), &is_new, &err);
 *   urlsieve_close(f, &err);
 *
 * Errors: every fallible function returns a urlsieve_status and, when `error` is not NULL, fills
 * it with the same code and a NUL-terminated message. There is no global or per-handle "last
 * error", so one handle can be shared by threads.
 *
 * ABI growth: urlsieve_options and urlsieve_stats start with `struct_size`; urlsieve_options_init
 * and the caller (for stats) set it to sizeof the struct they were compiled with, and the library
 * reads or writes only that many bytes. New fields are only ever appended.
 *
 * Thread-safety: every function may be called concurrently on one handle, except urlsieve_close,
 * which must be the last call on it.
 *
 * fork(): a handle opened before a fork() is the parent's. In the child every call on it returns
 * URLSIEVE_FAILED_PRECONDITION (its state, lock and Redis connections stay the parent's), and
 * urlsieve_close frees the child's copy without saving or closing anything; the child opens a
 * handle of its own.
 */
#ifndef URLSIEVE_DEDUP_URLSIEVE_H_
#define URLSIEVE_DEDUP_URLSIEVE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum urlsieve_status {
  URLSIEVE_OK = 0,
  URLSIEVE_INVALID_ARGUMENT = 1, /* bad option, invalid URL, NULL where a pointer is needed */
  URLSIEVE_NOT_FOUND = 2,
  URLSIEVE_CORRUPTION = 3, /* foreign or damaged state directory (never overwritten) */
  URLSIEVE_IO_ERROR = 4,
  URLSIEVE_FAILED_PRECONDITION = 5,
  URLSIEVE_UNSUPPORTED = 6,
  URLSIEVE_OUT_OF_MEMORY = 7,
  URLSIEVE_INTERNAL = 8, /* an unexpected C++ exception, reported instead of crossing */
  URLSIEVE_BUFFER_TOO_SMALL = 9,
  URLSIEVE_UNAVAILABLE = 10 /* the Redis server is unreachable or timed out: retry later */
} urlsieve_status;

/* One verdict per URL of a batch. */
enum {
  URLSIEVE_SEEN = 0,   /* its canonical form was inserted before */
  URLSIEVE_NEW = 1,    /* first time: it is now recorded */
  URLSIEVE_INVALID = 2 /* not an absolute http(s) URL the canonicalizer accepts; not recorded */
};

#define URLSIEVE_ERROR_MESSAGE_SIZE 256
typedef struct urlsieve_error {
  urlsieve_status code;
  char message[URLSIEVE_ERROR_MESSAGE_SIZE]; /* NUL-terminated, truncated if longer */
} urlsieve_error;

typedef struct urlsieve_options {
  size_t struct_size;    /* sizeof(urlsieve_options); set by urlsieve_options_init */
  uint64_t capacity;     /* URLs at which the Bloom filter still meets fp_rate (it grows); 10^7 */
  double fp_rate;        /* Bloom false-positive bound, in (0, 1); 1e-3 */
  const char* state_dir; /* NULL or "": in memory only; else created or reopened */
  int exact;             /* nonzero: SQLite confirms Bloom "maybe seen" (needs state_dir); 0 */
  /* Opt-in canonicalization rules (docs/features/canonicalization.md, "Canonicalization"), all 0 by
   * default. */
  int sort_query;        /* order query parameters by name */
  int drop_empty_query;  /* "http://a/p?" -> "http://a/p" */
  int strip_session_ids; /* jsessionid, phpsessid, sid, ... */
  int strip_www;         /* "www.example.com" -> "example.com" */
  int collapse_slashes;  /* "/a//b" -> "/a/b" */
  size_t max_url_length; /* longer URLs are invalid; 2083 */
  /* Appended with state format 2 (still urlsieve 0.1.0); a caller compiled before it passes a
   * smaller struct_size and gets 0. Nonzero: rebuild the Bloom filter of an exact state from its
   * exact store instead of loading bloom.snap; the only way past a missing, stale or corrupt
   * snapshot, which is otherwise an error. FAILED_PRECONDITION for a Bloom-only state. 0 */
  int rebuild_bloom;
  /* Appended with the Redis seen set; a caller compiled before it gets NULL, NULL and the default.
   * A seen set shared in Redis (docs/embedding.md, "Sharing one set through Redis"): every
   * process and thread that opens the same name on the same server shares it, and exactly one of
   * them is told a URL is new. Both or neither: redis_url
   * "redis://[[user]:password@]host:port[/db]" and redis_name (1-64 of [A-Za-z0-9_.-]); state_dir
   * must then be NULL or "" and rebuild_bloom 0 (INVALID_ARGUMENT otherwise). exact needs no
   * state_dir there. An existing set keeps the parameters it was created with. The strings are read
   * during urlsieve_open only. */
  const char* redis_url;           /* NULL or "": no Redis */
  const char* redis_name;          /* NULL or "": no Redis */
  uint64_t redis_front_cache_keys; /* keys known seen, answered without a round trip; 0: none;
                                      urlsieve_options_init: 1048576 */
  /* Appended with re-crawls; a caller compiled before it gets 0 and 4. Time
   * (docs/features/generational.md, "The generational seen set"): a URL told new longer ago than
   * revisit_after_seconds is new again, and capacity counts URLs per period. 0: never.
   * Bloom-only: at most revisit_after_seconds / generations late; exact (a local state), to the
   * second by each URL's first-seen time (generations unused). Stored with a new state; an
   * existing one keeps its own. */
  uint64_t revisit_after_seconds;
  uint32_t generations; /* the period is cut into (1-256); urlsieve_options_init: 4 */
  /* Appended with forgetting (docs/features/forgetting.md, "Forgetting"); a caller compiled before
   * it gets 0. Nonzero: a Bloom-only filter keeps 4-bit counters (4x the memory) so that
   * urlsieve_forget works, locally or over Redis. Stored with the state (an existing one keeps its
   * own). INVALID_ARGUMENT with exact (which forgets without it). 0 */
  int deletable;
  /* Appended with the tracking parameter rule; a caller compiled before it gets 0, NULL and 0.
   * Nonzero: the opt-in rule strip_tracking_params removes known tracking query parameters (utm_*,
   * fbclid, gclid, msclkid, ...; docs/features/canonicalization.md, "Tracking parameters") from
   * the key. 0 */
  int strip_tracking_params;
  /* With strip_tracking_params: tracking_exception_count strings "HOST:NAME", each keeping the
   * parameter NAME on HOST and the hosts under it ("example.com:ref"); INVALID_ARGUMENT for a
   * malformed one. Read during urlsieve_open only. NULL and 0: none. Stored with a new state; an
   * existing one keeps its own. */
  const char* const* tracking_exceptions;
  size_t tracking_exception_count;
} urlsieve_options;

typedef struct urlsieve_stats {
  size_t struct_size; /* the caller sets sizeof(urlsieve_stats) */
  uint64_t capacity;  /* as stored in the state */
  double fp_rate;     /* as stored in the state */
  int exact;
  uint64_t bloom_inserted;
  uint64_t bloom_capacity;
  uint32_t bloom_layers;
  uint64_t bloom_bytes;
  double bloom_fill_ratio;
  double bloom_expected_fp_rate;
  uint64_t stored_keys;     /* exact mode: rows in the exact store */
  uint64_t maybe_lookups;   /* exact mode: Bloom "maybe seen" answers checked in SQLite */
  uint64_t false_positives; /* ... of which the URL was in fact new */
  /* Appended with re-crawls: as stored (0: URLs are never new again), and the live generation
   * filters (bloom_* above are their sums). */
  uint64_t revisit_after_seconds;
  uint32_t generations;
  uint32_t live_generations;
} urlsieve_stats;

/* A URL as pointer + length (need not be NUL-terminated). */
typedef struct urlsieve_url {
  const char* data;
  size_t size;
} urlsieve_url;

typedef struct urlsieve_filter urlsieve_filter;

/* "0.1.0". */
const char* urlsieve_version(void);
/* A static description of a status code ("ok", "invalid argument", ...). */
const char* urlsieve_status_name(urlsieve_status code);

/* Sets every field to its default (and struct_size). */
void urlsieve_options_init(urlsieve_options* options);

/* Opens or creates a filter. On success *filter is a new handle; on failure *filter is NULL.
 * INVALID_ARGUMENT for bad options, CORRUPTION for a damaged, truncated or mixed-up state
 * directory (files of another state or generation; nothing is changed), FAILED_PRECONDITION when
 * another process has the state directory open (the message names its pid: a state directory is
 * locked from urlsieve_open to urlsieve_close) or its Bloom snapshot is missing. A state directory
 * that exists keeps the capacity, fp_rate, exact flag and rules it was created with.
 * Over Redis (redis_url, redis_name) the messages name the server: UNAVAILABLE when it cannot be
 * reached, FAILED_PRECONDITION for a wrong password, a peer that is not Redis or a name that holds
 * another type, UNSUPPORTED / CORRUPTION for a set of another version or not urlsieve's. Then
 * every call may fail with UNAVAILABLE (Redis down, restarting or timing out: retry later; the
 * handle reconnects by itself) or another error; a Redis fault never answers "seen". */
urlsieve_status urlsieve_open(const urlsieve_options* options, urlsieve_filter** filter,
                              urlsieve_error* error);

/* Saves (when it has a state directory) and frees the handle, which is invalid afterwards even
 * when saving fails. NULL is a no-op. */
urlsieve_status urlsieve_close(urlsieve_filter* filter, urlsieve_error* error);

/* *is_new = 1 if the URL's canonical form was never inserted (it now is), else 0.
 * INVALID_ARGUMENT (with the reason) for a URL that is not a valid absolute http(s) URL. */
urlsieve_status urlsieve_insert_if_new(urlsieve_filter* filter, const char* url, size_t size,
                                       int* is_new, urlsieve_error* error);

/* results[i] = URLSIEVE_NEW / URLSIEVE_SEEN / URLSIEVE_INVALID for urls[i]; a URL repeated in
 * the batch is new at most once (its first occurrence). Invalid URLs do not fail the call (use
 * urlsieve_canonicalize for the reason); a non-OK status means the state store failed and no
 * result can be trusted. Faster than single inserts: one call, one transaction. */
urlsieve_status urlsieve_insert_batch(urlsieve_filter* filter, const urlsieve_url* urls,
                                      size_t count, uint8_t* results, urlsieve_error* error);

/* *seen = 1 if the URL's canonical form was inserted before; records nothing. */
urlsieve_status urlsieve_contains(const urlsieve_filter* filter, const char* url, size_t size,
                                  int* seen, urlsieve_error* error);

/* Forgets the URL's canonical form, so that its next insert is new again; *forgotten = 1 if it
 * was in the filter, else 0. Durable as inserts are (urlsieve_save / urlsieve_close).
 * UNSUPPORTED (nothing changed) for a plain Bloom filter: open it with exact or deletable.
 * INVALID_ARGUMENT for an invalid URL. */
urlsieve_status urlsieve_forget(urlsieve_filter* filter, const char* url, size_t size,
                                int* forgotten, urlsieve_error* error);

/* Writes the canonical key of a URL (what the filter deduplicates) into buffer, NUL-terminated,
 * and its length to *key_size. INVALID_ARGUMENT with the reason for an invalid URL;
 * BUFFER_TOO_SMALL when buffer_size <= the key's length (*key_size still says how long it is). */
urlsieve_status urlsieve_canonicalize(const urlsieve_filter* filter, const char* url, size_t size,
                                      char* buffer, size_t buffer_size, size_t* key_size,
                                      urlsieve_error* error);

/* Fills the first stats->struct_size bytes of *stats. */
urlsieve_status urlsieve_get_stats(const urlsieve_filter* filter, urlsieve_stats* stats,
                                   urlsieve_error* error);

/* Makes everything inserted so far durable; a no-op in memory and over Redis (each insert is in
 * Redis when it returns; what survives a Redis crash is Redis's persistence: use AOF). */
urlsieve_status urlsieve_save(urlsieve_filter* filter, urlsieve_error* error);

/* The content-seen test (docs/features/content-seen.md, "For embedders"): has this page's content
 * been seen before, under any URL? A page is given by two fingerprints: a 64-bit digest of its
 * bytes (urlsieve_payload_digest, or the first 8 bytes of a SHA-1 you already have) and, for a
 * page with text, the SimHash of its visible text (urlsieve_simhash). A set answers FIRST (now
 * recorded), EXACT (the same digest was tested before) or NEAR (a recorded page's simhash is within
 * max_distance bits), naming the first copy by the id and data it was tested with.
 *
 *   urlsieve_content_options o;
 *   urlsieve_content_set* set;
 *   urlsieve_content_verdict v;
 *   char first_id[URLSIEVE_CONTENT_COPY_MAX + 1];
 *   urlsieve_content_options_init(&o);
 *   urlsieve_content_set_open(&o, &set, &err);
 *   urlsieve_content_verdict_init(&v);
 *   v.first_id = first_id;
 *   v.first_id_capacity = sizeof(first_id);
 *   urlsieve_content_test(set, urlsieve_payload_digest(body, body_size),
 *                         urlsieve_simhash(text, text_size, 3), 1, url, strlen(url), NULL, 0, &v,
 *                         &err);
 *   if (v.kind == URLSIEVE_CONTENT_NEAR) printf("near %s (%d bits)\n", first_id, v.distance);
 *   urlsieve_content_set_close(set, &err);
 *
 * The same conventions as above: a urlsieve_status and an optional urlsieve_error, struct_size for
 * ABI growth, every function callable concurrently on one handle (except close, the last call),
 * and a handle opened before a fork() is FAILED_PRECONDITION in the child. */

/* The most bytes of a page's id or data. */
#define URLSIEVE_CONTENT_COPY_MAX 4096

/* urlsieve_content_verdict.kind */
enum {
  URLSIEVE_CONTENT_FIRST = 0, /* not seen: now recorded (`refetch`: this page, recorded before) */
  URLSIEVE_CONTENT_EXACT = 1, /* the same digest was recorded: first_id names that page */
  URLSIEVE_CONTENT_NEAR = 2   /* a recorded simhash is `distance` bits away: first_id names it */
};

/* Charikar's SimHash of UTF-8 text (docs/features/content-seen.md, "Fingerprints"; the
 * construction, to the bit, in dedup/content/simhash.h): words are runs of ASCII letters and
 * digits and of bytes >= 0x80 (ASCII lowercased), a word with a digit is dropped (dates, counters,
 * tokens), features are the shingles of `shingle_words` consecutive words (clamped to 1..16; 3 is
 * the crawler's). 0 for a text without a word (and for text NULL). Pure: callable from any
 * thread. */
uint64_t urlsieve_simhash(const char* text, size_t size, int shingle_words);

/* The number of bits in which a and b differ (0..64). */
int urlsieve_hamming_distance(uint64_t a, uint64_t b);

/* A 64-bit digest of the bytes (XXH3-64), for callers without a SHA-1 at hand. One set must see
 * one kind of digest: these, or the first 8 bytes of SHA-1s (urlsieve_warc_payload_digest). */
uint64_t urlsieve_payload_digest(const void* bytes, size_t size);

/* The first 8 bytes (big-endian) of the SHA-1 in a WARC-Payload-Digest value "sha1:<32 base32
 * characters>": what the crawler and `urlsieve dupes` put in a set. Returns 1 and sets *digest, or
 * 0 for any other form. */
int urlsieve_warc_payload_digest(const char* warc_digest, size_t size, uint64_t* digest);

typedef struct urlsieve_content_options {
  size_t struct_size; /* sizeof(urlsieve_content_options); set by urlsieve_content_options_init */
  int max_distance;   /* 0..7: NEAR means within this many bits of 64; 3 */
  int near;           /* 0: only the exact test (simhashes are ignored); 1 */
  /* Both or neither: a set shared in Redis (as urlsieve_options' redis_url and redis_name), by
   * every process that opens this name on this server; of two pages with one fingerprint tested at
   * once anywhere, exactly one is FIRST. The set keeps the max_distance and near it was created
   * with: another value is FAILED_PRECONDITION. NULL or "": a set in this process's memory
   * (nothing is saved). Read during urlsieve_content_set_open only. */
  const char* redis_url;
  const char* redis_name;
} urlsieve_content_options;

/* What urlsieve_content_test answers. The caller sets struct_size (urlsieve_content_verdict_init)
 * and, when it wants the first copy's id and data, buffers for them; the library writes the rest.
 * The buffers are the caller's: nothing returned points into the library, so the verdict stays
 * valid for as long as the caller keeps it, on any thread. A copy is written as snprintf writes:
 * at most capacity - 1 bytes and a NUL; *_size is its whole length, so it was cut short when
 * *_size >= capacity (the test itself is not undone). A buffer of URLSIEVE_CONTENT_COPY_MAX + 1
 * bytes always fits. data may contain NUL bytes: use first_data_size. */
typedef struct urlsieve_content_verdict {
  size_t struct_size; /* the caller sets sizeof(urlsieve_content_verdict) */
  int kind;           /* URLSIEVE_CONTENT_FIRST / _EXACT / _NEAR */
  int refetch;        /* FIRST: the recorded first is this page (the same id): nothing changed */
  int distance;       /* NEAR: the simhashes' Hamming distance (0..max_distance) */
  char* first_id;     /* NULL, or a buffer of first_id_capacity bytes: EXACT, NEAR: the first copy's
                         id; FIRST: "" */
  size_t first_id_capacity;
  size_t first_id_size;
  char* first_data; /* NULL, or a buffer of first_data_capacity bytes: the first copy's data */
  size_t first_data_capacity;
  size_t first_data_size;
} urlsieve_content_verdict;

typedef struct urlsieve_content_set urlsieve_content_set;

/* Sets every field to its default (and struct_size). */
void urlsieve_content_options_init(urlsieve_content_options* options);
/* Zeroes *verdict (no buffers) and sets struct_size. */
void urlsieve_content_verdict_init(urlsieve_content_verdict* verdict);

/* Opens a content-seen set. On failure *set is NULL. INVALID_ARGUMENT for bad options; over Redis
 * the errors of urlsieve_open (UNAVAILABLE when the server cannot be reached, ...), each naming
 * the server. */
urlsieve_status urlsieve_content_set_open(const urlsieve_content_options* options,
                                          urlsieve_content_set** set, urlsieve_error* error);

/* Frees the handle (a set in memory is gone; a Redis set stays in Redis). NULL is a no-op. */
urlsieve_status urlsieve_content_set_close(urlsieve_content_set* set, urlsieve_error* error);

/* Tests a page and records it when it is a first (docs/features/content-seen.md, "The
 * content-seen test"): EXACT when a recorded page has this digest; else, with has_simhash nonzero,
 * NEAR when a recorded first's simhash is within max_distance; else FIRST, and the page is
 * recorded with its id (1..URLSIEVE_CONTENT_COPY_MAX bytes, no NUL: a URL, say) and data (at most
 * URLSIEVE_CONTENT_COPY_MAX bytes, any bytes, may be NULL with data_size 0: what you want back
 * with a later copy, e.g. where you stored this one). A NEAR page's digest is recorded too, with
 * its own id and data (a later exact copy of it is EXACT, naming it), its simhash not (the first
 * of a neighbourhood stands for it). A page tested again under the id the matching page was
 * recorded with is FIRST with refetch set, and nothing changes. INVALID_ARGUMENT (nothing
 * recorded) for a bad id or data. */
urlsieve_status urlsieve_content_test(urlsieve_content_set* set, uint64_t digest, uint64_t simhash,
                                      int has_simhash, const char* id, size_t id_size,
                                      const void* data, size_t data_size,
                                      urlsieve_content_verdict* verdict, urlsieve_error* error);

/* Removes what is recorded for the page with this digest (and simhash) and id, so that its next
 * test is FIRST again; *forgotten = 1 if something was, else 0. */
urlsieve_status urlsieve_content_forget(urlsieve_content_set* set, uint64_t digest,
                                        uint64_t simhash, int has_simhash, const char* id,
                                        size_t id_size, int* forgotten, urlsieve_error* error);

/* *pages = the digests recorded (over Redis: as of this handle's last call). */
urlsieve_status urlsieve_content_set_size(const urlsieve_content_set* set, uint64_t* pages,
                                          urlsieve_error* error);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* URLSIEVE_DEDUP_URLSIEVE_H_ */
