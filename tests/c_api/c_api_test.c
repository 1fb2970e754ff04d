/* The C API (dedup/urlsieve.h) exercised from C: in-memory and persistent filters, batches,
 * errors (invalid URLs, bad options, NULL arguments, a corrupt state directory), ABI growth of the
 * option and stats structs, concurrent inserts, and a seen set shared in Redis (a real
 * redis-server this program starts on a free loopback port and kills at exit). Exits non-zero if
 * a check failed. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dedup/urlsieve.h"
#include "redis_server.h"

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

#define CHECK_OK(expr)                                                                  \
  do {                                                                                  \
    urlsieve_error e_;                                                                  \
    urlsieve_status s_;                                                                 \
    memset(&e_, 0, sizeof(e_));                                                         \
    s_ = urlsieve_##expr;                                                               \
    if (s_ != URLSIEVE_OK) {                                                            \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, e_.message); \
      ++failures;                                                                       \
    }                                                                                   \
  } while (0)

/* An open that must succeed; prints the error's message otherwise. */
#define CHECK_OPENED(expr, error)                                                          \
  do {                                                                                     \
    if ((expr) != URLSIEVE_OK) {                                                           \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, error.message); \
      ++failures;                                                                          \
    }                                                                                      \
  } while (0)

static urlsieve_filter* OpenMemory(void) {
  urlsieve_options o;
  urlsieve_filter* f = NULL;
  urlsieve_error e;
  urlsieve_options_init(&o);
  o.capacity = 10000;
  if (urlsieve_open(&o, &f, &e) != URLSIEVE_OK) {
    fprintf(stderr, "open: %s\n", e.message);
    exit(1);
  }
  return f;
}

static int Insert(urlsieve_filter* f, const char* url) {
  int is_new = -1;
  urlsieve_error e;
  if (urlsieve_insert_if_new(f, url, strlen(url), &is_new, &e) != URLSIEVE_OK) return -1;
  return is_new;
}

static void TestSpellingsAreOneUrl(void) {
  urlsieve_filter* f = OpenMemory();
  int seen = -1;
  CHECK(Insert(f, "http://Example.COM/a/./b?x=1#top") == 1);
  CHECK(Insert(f, "HTTP://example.com:80/a/b?x=1") == 0);
  CHECK(Insert(f, "http://example.com/a/%62?x=1") == 0);
  CHECK(Insert(f, "http://example.com/a/c") == 1);
  CHECK_OK(contains(f, "http://example.com/a/b?x=1#other", 33, &seen, &e_));
  CHECK(seen == 1);
  CHECK_OK(contains(f, "http://example.com/never", 24, &seen, &e_));
  CHECK(seen == 0);
  CHECK(Insert(f, "http://example.com/never") == 1); /* contains recorded nothing */
  CHECK_OK(close(f, &e_));
}

static void TestInvalidUrlIsAnErrorWithAReason(void) {
  urlsieve_filter* f = OpenMemory();
  urlsieve_error e;
  int is_new = -1;
  const char* bad = "ftp://example.com/file";
  CHECK(urlsieve_insert_if_new(f, bad, strlen(bad), &is_new, &e) == URLSIEVE_INVALID_ARGUMENT);
  CHECK(e.code == URLSIEVE_INVALID_ARGUMENT);
  CHECK(strlen(e.message) > 0);
  CHECK(is_new == -1);
  CHECK(urlsieve_insert_if_new(f, "not a url", 9, &is_new, &e) == URLSIEVE_INVALID_ARGUMENT);
  /* The length is honoured: no NUL needed, bytes after it are ignored. */
  CHECK(urlsieve_insert_if_new(f, "http://a.example/xyz", 18, &is_new, &e) == URLSIEVE_OK);
  CHECK(is_new == 1);
  CHECK(Insert(f, "http://a.example/x") == 0);
  /* Error out-param is optional. */
  CHECK(urlsieve_insert_if_new(f, bad, strlen(bad), &is_new, NULL) == URLSIEVE_INVALID_ARGUMENT);
  CHECK_OK(close(f, &e_));
}

static void TestBatch(void) {
  urlsieve_filter* f = OpenMemory();
  urlsieve_url urls[6];
  uint8_t results[6];
  const char* text[6] = {"http://b.example/1", "http://B.example/1#f", "mailto:x@y",
                         "http://b.example/2", "http://b.example/1",   "http://b.example/3"};
  int i;
  CHECK(Insert(f, "http://b.example/3") == 1);
  for (i = 0; i < 6; ++i) {
    urls[i].data = text[i];
    urls[i].size = strlen(text[i]);
  }
  memset(results, 0xAA, sizeof(results));
  CHECK_OK(insert_batch(f, urls, 6, results, &e_));
  CHECK(results[0] == URLSIEVE_NEW);
  CHECK(results[1] == URLSIEVE_SEEN); /* repeated within the batch: new only once */
  CHECK(results[2] == URLSIEVE_INVALID);
  CHECK(results[3] == URLSIEVE_NEW);
  CHECK(results[4] == URLSIEVE_SEEN);
  CHECK(results[5] == URLSIEVE_SEEN);
  CHECK_OK(insert_batch(f, NULL, 0, NULL, &e_)); /* empty batch */
  CHECK_OK(close(f, &e_));
}

static void TestCanonicalizeAndStats(void) {
  urlsieve_filter* f = OpenMemory();
  char buf[64];
  char tiny[8];
  size_t n = 0;
  urlsieve_error e;
  urlsieve_stats st;
  const char* url = "HTTP://Example.com:80/a/../b#x";
  CHECK_OK(canonicalize(f, url, strlen(url), buf, sizeof(buf), &n, &e_));
  CHECK(strcmp(buf, "http://example.com/b") == 0);
  CHECK(n == strlen("http://example.com/b"));
  CHECK(urlsieve_canonicalize(f, url, strlen(url), tiny, sizeof(tiny), &n, &e) ==
        URLSIEVE_BUFFER_TOO_SMALL);
  CHECK(n == strlen("http://example.com/b"));
  CHECK(urlsieve_canonicalize(f, "x", 1, buf, sizeof(buf), &n, &e) == URLSIEVE_INVALID_ARGUMENT);

  CHECK(Insert(f, "http://s.example/1") == 1);
  CHECK(Insert(f, "http://s.example/2") == 1);
  CHECK(Insert(f, "http://s.example/2") == 0);
  memset(&st, 0, sizeof(st));
  st.struct_size = sizeof(st);
  CHECK_OK(get_stats(f, &st, &e_));
  CHECK(st.bloom_inserted == 2);
  CHECK(st.capacity == 10000);
  CHECK(st.exact == 0);
  CHECK(st.bloom_bytes > 0);
  CHECK(st.bloom_fill_ratio > 0 && st.bloom_fill_ratio < 1);
  /* An older caller's smaller struct: only its prefix is written. */
  memset(&st, 0x5A, sizeof(st));
  st.struct_size = offsetof(urlsieve_stats, fp_rate);
  CHECK_OK(get_stats(f, &st, &e_));
  CHECK(st.capacity == 10000);
  CHECK(st.exact == 0x5A5A5A5A);
  st.struct_size = 0;
  CHECK(urlsieve_get_stats(f, &st, &e) == URLSIEVE_INVALID_ARGUMENT);
  CHECK_OK(save(f, &e_)); /* in memory: a no-op */
  CHECK_OK(close(f, &e_));
}

static void TestBadOptions(void) {
  urlsieve_options o;
  urlsieve_filter* f = (urlsieve_filter*)&o; /* must be reset to NULL on failure */
  urlsieve_error e;

  urlsieve_options_init(&o);
  o.fp_rate = 0;
  CHECK(urlsieve_open(&o, &f, &e) == URLSIEVE_INVALID_ARGUMENT);
  CHECK(f == NULL);
  CHECK(strlen(e.message) > 0);

  urlsieve_options_init(&o);
  o.fp_rate = 1.5;
  CHECK(urlsieve_open(&o, &f, &e) == URLSIEVE_INVALID_ARGUMENT);

  urlsieve_options_init(&o);
  o.capacity = 0;
  CHECK(urlsieve_open(&o, &f, &e) == URLSIEVE_INVALID_ARGUMENT);

  urlsieve_options_init(&o);
  o.exact = 1; /* exact needs a state directory */
  CHECK(urlsieve_open(&o, &f, &e) == URLSIEVE_INVALID_ARGUMENT);

  memset(&o, 0, sizeof(o)); /* forgot urlsieve_options_init */
  CHECK(urlsieve_open(&o, &f, &e) == URLSIEVE_INVALID_ARGUMENT);

  CHECK(urlsieve_open(NULL, &f, &e) == URLSIEVE_INVALID_ARGUMENT);
  urlsieve_options_init(&o);
  CHECK(urlsieve_open(&o, NULL, &e) == URLSIEVE_INVALID_ARGUMENT);
  CHECK(urlsieve_insert_if_new(NULL, "http://a/", 9, NULL, &e) == URLSIEVE_INVALID_ARGUMENT);
  CHECK(urlsieve_close(NULL, &e) == URLSIEVE_OK);

  /* An older caller's options struct (without the canonicalizer rules) gets their defaults. */
  urlsieve_options_init(&o);
  o.struct_size = offsetof(urlsieve_options, sort_query);
  o.sort_query = 12345; /* beyond struct_size: must be ignored */
  CHECK(urlsieve_open(&o, &f, &e) == URLSIEVE_OK);
  if (f != NULL) {
    CHECK(Insert(f, "http://o.example/?b=1&a=2") == 1);
    CHECK(Insert(f, "http://o.example/?a=2&b=1") == 1); /* not sorted: a different URL */
    CHECK_OK(close(f, &e_));
  }
  CHECK(strcmp(urlsieve_status_name(URLSIEVE_CORRUPTION), "corruption") == 0);
  CHECK(strlen(urlsieve_version()) > 0);
}

static char* MakeTempDir(void) {
  const char* base = getenv("TMPDIR");
  char* path = malloc(512);
  snprintf(path, 512, "%s/urlsieve_c_api_XXXXXX", base != NULL && base[0] ? base : "/tmp");
  if (mkdtemp(path) == NULL) {
    perror("mkdtemp");
    exit(1);
  }
  return path;
}

static void RemoveTree(const char* dir) {
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

static void TestPersistence(int exact) {
  char* root = MakeTempDir();
  char dir[600];
  urlsieve_options o;
  urlsieve_filter* f = NULL;
  urlsieve_stats st;
  int seen = -1;
  snprintf(dir, sizeof(dir), "%s/state", root);
  urlsieve_options_init(&o);
  o.capacity = 1000;
  o.state_dir = dir;
  o.exact = exact;
  o.strip_www = 1;
  CHECK_OK(open(&o, &f, &e_));
  if (f == NULL) return;
  CHECK(Insert(f, "http://www.p.example/1") == 1);
  CHECK(Insert(f, "http://p.example/2") == 1);
  CHECK_OK(close(f, &e_)); /* saves */

  /* Reopened with other options: the stored ones win (capacity, exact, strip_www). */
  o.capacity = 999999;
  o.strip_www = 0;
  CHECK_OK(open(&o, &f, &e_));
  if (f == NULL) return;
  CHECK_OK(contains(f, "http://p.example/1", 18, &seen, &e_));
  CHECK(seen == 1);
  CHECK(Insert(f, "http://www.p.example/2") == 0);
  CHECK(Insert(f, "http://p.example/3") == 1);
  memset(&st, 0, sizeof(st));
  st.struct_size = sizeof(st);
  CHECK_OK(get_stats(f, &st, &e_));
  CHECK(st.capacity == 1000);
  CHECK(st.exact == exact);
  if (exact) CHECK(st.stored_keys == 3);
  CHECK_OK(close(f, &e_));
  RemoveTree(root);
  free(root);
}

static int Forget(urlsieve_filter* f, const char* url) {
  int forgotten = -1;
  urlsieve_error e;
  if (urlsieve_forget(f, url, strlen(url), &forgotten, &e) != URLSIEVE_OK) return -1;
  return forgotten;
}

/* Forgetting (docs/features/forgetting.md, "Forgetting"): a plain filter refuses, a deletable one
 * forgets, durably once closed. */
static void TestForget(void) {
  char* root = MakeTempDir();
  char dir[600];
  urlsieve_options o;
  urlsieve_filter* f = OpenMemory();
  urlsieve_error e;
  int forgotten = -1;
  CHECK(Insert(f, "http://f.example/1") == 1);
  CHECK(urlsieve_forget(f, "http://f.example/1", 18, &forgotten, &e) == URLSIEVE_UNSUPPORTED);
  CHECK(e.code == URLSIEVE_UNSUPPORTED);
  CHECK(strstr(e.message, "--deletable") != NULL);
  CHECK(forgotten == -1);
  CHECK(Insert(f, "http://f.example/1") == 0); /* unchanged */
  CHECK(urlsieve_forget(f, NULL, 0, NULL, &e) == URLSIEVE_INVALID_ARGUMENT);
  urlsieve_close(f, NULL);

  snprintf(dir, sizeof(dir), "%s/state", root);
  urlsieve_options_init(&o);
  CHECK(o.deletable == 0);
  o.capacity = 1000;
  o.state_dir = dir;
  o.deletable = 1;
  f = NULL;
  CHECK_OPENED(urlsieve_open(&o, &f, &e), e);
  if (f == NULL) return;
  CHECK(Insert(f, "http://f.example/1") == 1);
  CHECK(Insert(f, "http://f.example/2") == 1);
  CHECK(Forget(f, "HTTP://F.EXAMPLE:80/1") == 1); /* canonicalized as an insert */
  CHECK(Forget(f, "http://f.example/never") == 0);
  CHECK(urlsieve_forget(f, "not a url", 9, &forgotten, &e) == URLSIEVE_INVALID_ARGUMENT);
  CHECK(urlsieve_close(f, &e) == URLSIEVE_OK); /* saves */

  o.deletable = 0; /* the state keeps its own */
  f = NULL;
  CHECK_OPENED(urlsieve_open(&o, &f, &e), e);
  if (f == NULL) return;
  CHECK(Insert(f, "http://f.example/1") == 1); /* forgotten: new again */
  CHECK(Insert(f, "http://f.example/2") == 0);
  CHECK(Forget(f, "http://f.example/2") == 1);
  urlsieve_close(f, NULL);

  o.exact = 1;
  o.deletable = 1;
  snprintf(dir, sizeof(dir), "%s/exact", root);
  f = NULL;
  CHECK(urlsieve_open(&o, &f, &e) == URLSIEVE_INVALID_ARGUMENT);
  CHECK(f == NULL);
  RemoveTree(root);
  free(root);
}

static void TestCorruptStateDirIsAnErrorAndUntouched(void) {
  char* root = MakeTempDir();
  char db[600];
  char back[64];
  FILE* fp;
  urlsieve_options o;
  urlsieve_filter* f = (urlsieve_filter*)&o;
  urlsieve_error e;
  static const char kGarbage[] = "this is not an SQLite database, it is garbage............";
  snprintf(db, sizeof(db), "%s/state.db", root);
  fp = fopen(db, "wb");
  fwrite(kGarbage, 1, sizeof(kGarbage), fp);
  fclose(fp);

  urlsieve_options_init(&o);
  o.state_dir = root;
  CHECK(urlsieve_open(&o, &f, &e) == URLSIEVE_CORRUPTION);
  CHECK(f == NULL);
  CHECK(e.code == URLSIEVE_CORRUPTION);
  CHECK(strlen(e.message) > 0);
  o.exact = 1;
  CHECK(urlsieve_open(&o, &f, &e) == URLSIEVE_CORRUPTION);

  fp = fopen(db, "rb");
  CHECK(fp != NULL);
  if (fp != NULL) {
    memset(back, 0, sizeof(back));
    CHECK(fread(back, 1, sizeof(back), fp) == sizeof(kGarbage));
    CHECK(memcmp(back, kGarbage, sizeof(kGarbage)) == 0); /* never overwritten */
    fclose(fp);
  }
  RemoveTree(root);
  free(root);
}

static void TestTruncatedSnapshotIsAnError(void) {
  char* root = MakeTempDir();
  char dir[600];
  char snap[700];
  urlsieve_options o;
  urlsieve_filter* f = NULL;
  urlsieve_error e;
  snprintf(dir, sizeof(dir), "%s/state", root);
  snprintf(snap, sizeof(snap), "%s/bloom.snap", dir);
  urlsieve_options_init(&o);
  o.capacity = 1000;
  o.state_dir = dir;
  CHECK_OK(open(&o, &f, &e_));
  if (f == NULL) return;
  CHECK(Insert(f, "http://t.example/") == 1);
  CHECK_OK(close(f, &e_));
  CHECK(truncate(snap, 20) == 0);
  CHECK(urlsieve_open(&o, &f, &e) != URLSIEVE_OK); /* Bloom-only: nothing to rebuild from */
  CHECK(f == NULL);
  CHECK(strlen(e.message) > 0);
  RemoveTree(root);
  free(root);
}

/* A state directory is locked from urlsieve_open to urlsieve_close: a second open is refused with
 * a message naming the directory and the holder's pid (issue 10). */
static void TestStateDirIsLocked(void) {
  char* root = MakeTempDir();
  char pid[32];
  urlsieve_options o;
  urlsieve_filter* first = NULL;
  urlsieve_filter* second = NULL;
  urlsieve_error e;
  urlsieve_options_init(&o);
  o.capacity = 1000;
  o.state_dir = root;
  CHECK_OK(open(&o, &first, &e_));
  if (first == NULL) return;
  CHECK(urlsieve_open(&o, &second, &e) == URLSIEVE_FAILED_PRECONDITION);
  CHECK(second == NULL);
  CHECK(strstr(e.message, root) != NULL);
  snprintf(pid, sizeof(pid), "process %ld", (long)getpid());
  CHECK(strstr(e.message, pid) != NULL);
  CHECK_OK(close(first, &e_));
  CHECK_OK(open(&o, &second, &e_));
  CHECK_OK(close(second, &e_));
  RemoveTree(root);
  free(root);
}

static urlsieve_filter* OpenExactWithUrls(const char* dir, int count) {
  urlsieve_options o;
  urlsieve_filter* f = NULL;
  char url[600];
  int i;
  urlsieve_options_init(&o);
  o.capacity = 100000;
  o.state_dir = dir;
  o.exact = 1;
  CHECK_OK(open(&o, &f, &e_));
  if (f == NULL) return NULL;
  for (i = 0; i < count; ++i) {
    snprintf(url, sizeof(url), "http://m.example/%d/%0400d", i, i);
    CHECK(Insert(f, url) == 1);
  }
  return f;
}

/* A page of an exact-store shard overwritten with garbage: the error names the file. */
static void TestDamagedStateDbMessageNamesTheFile(void) {
  char* root = MakeTempDir();
  char db[600];
  char garbage[4096];
  FILE* fp;
  urlsieve_options o;
  urlsieve_filter* f = OpenExactWithUrls(root, 200);
  urlsieve_error e;
  if (f == NULL) return;
  CHECK_OK(close(f, &e_));
  /* The exact store's rows are in its shards: page 3 of seen-00.db. */
  snprintf(db, sizeof(db), "%s/seen-00.db", root);
  fp = fopen(db, "r+b");
  CHECK(fp != NULL);
  if (fp == NULL) return;
  memset(garbage, 0x5a, sizeof(garbage));
  CHECK(fseek(fp, 4096L * 2, SEEK_SET) == 0);
  CHECK(fwrite(garbage, 1, sizeof(garbage), fp) == sizeof(garbage));
  fclose(fp);
  urlsieve_options_init(&o);
  o.state_dir = root;
  o.exact = 1;
  f = NULL;
  CHECK(urlsieve_open(&o, &f, &e) == URLSIEVE_CORRUPTION);
  CHECK(f == NULL);
  CHECK(strstr(e.message, db) == e.message);
  if (strstr(e.message, db) != e.message) fprintf(stderr, "message: %s\n", e.message);
  RemoveTree(root);
  free(root);
}

/* A missing snapshot of an exact state is an error; rebuild_bloom rebuilds it on request. */
static void TestRebuildOnlyOnRequest(void) {
  char* root = MakeTempDir();
  char snap[600];
  char url[600];
  urlsieve_options o;
  urlsieve_filter* f = OpenExactWithUrls(root, 20);
  urlsieve_error e;
  if (f == NULL) return;
  CHECK_OK(close(f, &e_));
  snprintf(snap, sizeof(snap), "%s/bloom.snap", root);
  CHECK(unlink(snap) == 0);
  urlsieve_options_init(&o);
  o.state_dir = root;
  o.exact = 1;
  f = NULL;
  CHECK(urlsieve_open(&o, &f, &e) == URLSIEVE_FAILED_PRECONDITION);
  CHECK(strstr(e.message, snap) != NULL);
  CHECK(access(snap, F_OK) != 0);
  o.rebuild_bloom = 1;
  CHECK_OK(open(&o, &f, &e_));
  if (f == NULL) return;
  snprintf(url, sizeof(url), "http://m.example/%d/%0400d", 3, 3);
  CHECK(Insert(f, url) == 0); /* a URL inserted before the snapshot was lost */
  CHECK_OK(close(f, &e_));    /* saves a new snapshot */
  CHECK(access(snap, F_OK) == 0);
  RemoveTree(root);
  free(root);
}

enum { kThreads = 4, kUrls = 2000 };

typedef struct Worker {
  urlsieve_filter* filter;
  int new_count;
} Worker;

/* Every thread inserts the same URLs: exactly one may be told each is new (invariant 5). */
static void* InsertAll(void* arg) {
  Worker* w = (Worker*)arg;
  char url[64];
  int i;
  for (i = 0; i < kUrls; ++i) {
    snprintf(url, sizeof(url), "http://c.example/%d", i);
    if (Insert(w->filter, url) == 1) ++w->new_count;
  }
  return NULL;
}

static void TestConcurrentInsertsExactlyOneNew(void) {
  urlsieve_filter* f = OpenMemory();
  pthread_t threads[kThreads];
  Worker workers[kThreads];
  int t;
  int total = 0;
  for (t = 0; t < kThreads; ++t) {
    workers[t].filter = f;
    workers[t].new_count = 0;
    CHECK(pthread_create(&threads[t], NULL, InsertAll, &workers[t]) == 0);
  }
  for (t = 0; t < kThreads; ++t) pthread_join(threads[t], NULL);
  for (t = 0; t < kThreads; ++t) total += workers[t].new_count;
  CHECK(total == kUrls);
  CHECK_OK(close(f, &e_));
}

static urlsieve_status OpenRedis(const char* url, const char* name, uint64_t capacity, int exact,
                                 urlsieve_filter** f, urlsieve_error* e) {
  urlsieve_options o;
  urlsieve_options_init(&o);
  o.redis_url = url;
  o.redis_name = name;
  o.capacity = capacity;
  o.exact = exact;
  o.sort_query = 1;
  return urlsieve_open(&o, f, e);
}

/* Two handles on one Redis set behave as one set; the stored parameters win; bad combinations,
 * a wrong password and a server that is not there are clear errors. */
static void TestRedisSharedSet(void) {
  char* root = MakeTempDir();
  char url[128];
  char wrong[128];
  char nowhere[64];
  char port_text[16];
  urlsieve_filter* a = NULL;
  urlsieve_filter* b = NULL;
  urlsieve_filter* f = NULL;
  urlsieve_options o;
  urlsieve_error e;
  urlsieve_stats st;
  urlsieve_url urls[3];
  uint8_t results[3];
  const char* text[3] = {"http://r.example/2?b=1&a=2", "http://r.example/3", "gopher://x/"};
  int seen = -1;
  int i;
  int port = StartRedis(root, "sesame");
  CHECK(port != 0);
  if (port == 0) return;
  snprintf(url, sizeof(url), "redis://:sesame@127.0.0.1:%d", port);
  snprintf(wrong, sizeof(wrong), "redis://:open-sesame@127.0.0.1:%d", port);
  snprintf(port_text, sizeof(port_text), "%d", port);

  CHECK_OPENED(OpenRedis(url, "crawl1", 1000, 1, &a, &e), e);
  CHECK_OPENED(OpenRedis(url, "crawl1", 5000000, 0, &b, &e), e); /* the stored parameters win */
  if (a == NULL || b == NULL) {
    urlsieve_close(a, &e);
    urlsieve_close(b, &e);
    StopRedis();
    RemoveTree(root);
    free(root);
    return;
  }
  CHECK(Insert(a, "http://r.example/1") == 1);
  CHECK(Insert(b, "HTTP://R.example:80/1#x") == 0); /* one set, one canonical key */
  CHECK(Insert(b, "http://r.example/2?a=2&b=1") == 1);
  for (i = 0; i < 3; ++i) {
    urls[i].data = text[i];
    urls[i].size = strlen(text[i]);
  }
  CHECK_OK(insert_batch(a, urls, 3, results, &e_));
  CHECK(results[0] == URLSIEVE_SEEN); /* sort_query: the same URL as b's */
  CHECK(results[1] == URLSIEVE_NEW);
  CHECK(results[2] == URLSIEVE_INVALID);
  CHECK_OK(contains(b, "http://r.example/3", 18, &seen, &e_));
  CHECK(seen == 1);
  memset(&st, 0, sizeof(st));
  st.struct_size = sizeof(st);
  CHECK_OK(get_stats(b, &st, &e_));
  CHECK(st.capacity == 1000); /* as created by a */
  CHECK(st.exact == 1);
  CHECK_OK(save(b, &e_)); /* a no-op: Redis has every insert */
  CHECK_OK(close(a, &e_));
  CHECK_OK(close(b, &e_));

  /* Another name is another set. */
  CHECK_OPENED(OpenRedis(url, "crawl2", 1000, 0, &f, &e), e);
  if (f != NULL) {
    CHECK(Insert(f, "http://r.example/1") == 1);
    CHECK_OK(close(f, &e_));
  }

  /* Bad combinations. */
  f = (urlsieve_filter*)&o;
  CHECK(OpenRedis(url, NULL, 1000, 0, &f, &e) == URLSIEVE_INVALID_ARGUMENT);
  CHECK(f == NULL);
  CHECK(OpenRedis(NULL, "crawl1", 1000, 0, &f, &e) == URLSIEVE_INVALID_ARGUMENT);
  CHECK(strstr(e.message, "crawl1") != NULL);
  CHECK(OpenRedis("", "crawl1", 1000, 0, &f, &e) == URLSIEVE_INVALID_ARGUMENT);
  CHECK(OpenRedis("redis://127.0.0.1:bad", "crawl1", 1000, 0, &f, &e) == URLSIEVE_INVALID_ARGUMENT);
  urlsieve_options_init(&o);
  o.redis_url = url;
  o.redis_name = "crawl1";
  o.state_dir = root;
  CHECK(urlsieve_open(&o, &f, &e) == URLSIEVE_INVALID_ARGUMENT);
  CHECK(strstr(e.message, root) != NULL);
  o.state_dir = NULL;
  o.rebuild_bloom = 1;
  CHECK(urlsieve_open(&o, &f, &e) == URLSIEVE_INVALID_ARGUMENT);
  CHECK(f == NULL);

  /* A caller compiled before the Redis fields: they are not read (an in-memory filter). */
  urlsieve_options_init(&o);
  o.redis_url = "redis://127.0.0.1:1";
  o.redis_name = "never-read";
  o.struct_size = offsetof(urlsieve_options, redis_url);
  CHECK_OK(open(&o, &f, &e_));
  if (f != NULL) {
    CHECK(Insert(f, "http://r.example/1") == 1);
    CHECK_OK(close(f, &e_));
  }

  /* A wrong password; then a server that is not there: clear errors naming the server. */
  CHECK(OpenRedis(wrong, "crawl1", 1000, 0, &f, &e) == URLSIEVE_FAILED_PRECONDITION);
  CHECK(f == NULL);
  CHECK(strstr(e.message, port_text) != NULL);
  CHECK(strstr(e.message, "open-sesame") == NULL); /* never the password */
  StopRedis();
  snprintf(nowhere, sizeof(nowhere), "redis://127.0.0.1:%d", port);
  CHECK(OpenRedis(nowhere, "crawl1", 1000, 0, &f, &e) == URLSIEVE_UNAVAILABLE);
  CHECK(f == NULL);
  CHECK(strstr(e.message, port_text) != NULL);
  RemoveTree(root);
  free(root);
}

/* revisit_after_seconds (docs/features/generational.md): stored with the state and reported in
 * the stats; a caller compiled before the field gets a filter without time; exact mode takes it
 * too, without generations. (Ageing runs under a fake clock in generational_seen_set_test.cc and
 * exact_seen_set_test.cc.) */
static void TestRevisitAfter(void) {
  char* root = MakeTempDir();
  char dir[600];
  urlsieve_options o;
  urlsieve_options older;
  urlsieve_filter* f = NULL;
  urlsieve_error e;
  urlsieve_stats st;
  snprintf(dir, sizeof(dir), "%s/state", root);
  urlsieve_options_init(&o);
  CHECK(o.revisit_after_seconds == 0);
  CHECK(o.generations == 4);
  o.capacity = 1000;
  o.state_dir = dir;
  o.revisit_after_seconds = 7 * 24 * 3600;
  o.generations = 7;
  CHECK_OK(open(&o, &f, &e_));
  if (f == NULL) return;
  CHECK(Insert(f, "http://r.example/1") == 1);
  CHECK(Insert(f, "http://r.example/1") == 0);
  CHECK_OK(close(f, &e_));
  /* Reopened by a caller that does not know the field: the state keeps its own. */
  older = o;
  older.struct_size = offsetof(urlsieve_options, revisit_after_seconds);
  older.revisit_after_seconds = 0;
  f = NULL;
  CHECK_OK(open(&older, &f, &e_));
  if (f == NULL) return;
  CHECK(Insert(f, "http://r.example/1") == 0);
  memset(&st, 0, sizeof(st));
  st.struct_size = sizeof(st);
  CHECK_OK(get_stats(f, &st, &e_));
  CHECK(st.revisit_after_seconds == 7 * 24 * 3600);
  CHECK(st.generations == 7);
  CHECK(st.live_generations >= 1);
  CHECK(st.bloom_inserted == 1);
  CHECK_OK(close(f, &e_));
  snprintf(dir, sizeof(dir), "%s/exact", root);
  o.exact = 1;
  f = NULL;
  CHECK_OK(open(&o, &f, &e_));
  if (f == NULL) return;
  CHECK(Insert(f, "http://r.example/1") == 1);
  CHECK(Insert(f, "http://r.example/1") == 0);
  memset(&st, 0, sizeof(st));
  st.struct_size = sizeof(st);
  CHECK_OK(get_stats(f, &st, &e_));
  CHECK(st.exact == 1);
  CHECK(st.revisit_after_seconds == 7 * 24 * 3600);
  CHECK(st.generations == 0);
  CHECK_OK(close(f, &e_));
  o.exact = 0;
  o.state_dir = NULL;
  o.generations = 0;
  CHECK(urlsieve_open(&o, &f, &e) == URLSIEVE_INVALID_ARGUMENT);
  CHECK(f == NULL);
  RemoveTree(root);
  free(root);
}

/* strip_tracking_params (docs/features/canonicalization.md, "Tracking parameters"): known
 * tracking parameters leave the key except where an exception keeps them; a malformed exception
 * is INVALID_ARGUMENT; a state keeps the rule and its exceptions; a caller compiled before the
 * fields gets the rule off. */
static void TestStripTrackingParams(void) {
  char* root = MakeTempDir();
  char dir[600];
  char buf[128];
  size_t n = 0;
  urlsieve_options o;
  urlsieve_options older;
  urlsieve_filter* f = NULL;
  urlsieve_error e;
  const char* keep[2];
  const char* bad[1];
  const char* url = "http://t.example/p?id=7&utm_source=news&fbclid=abc";
  const char* kept = "http://shop.keep.example/p?id=7&utm_source=x&gclid=1";
  snprintf(dir, sizeof(dir), "%s/state", root);
  urlsieve_options_init(&o);
  CHECK(o.strip_tracking_params == 0);
  CHECK(o.tracking_exceptions == NULL);
  CHECK(o.tracking_exception_count == 0);
  keep[0] = "Keep.Example:UTM_SOURCE";
  keep[1] = "other.example:ref";
  o.capacity = 1000;
  o.state_dir = dir;
  o.strip_tracking_params = 1;
  o.tracking_exceptions = keep;
  o.tracking_exception_count = 2;
  CHECK_OK(open(&o, &f, &e_));
  if (f == NULL) return;
  CHECK_OK(canonicalize(f, url, strlen(url), buf, sizeof(buf), &n, &e_));
  CHECK(strcmp(buf, "http://t.example/p?id=7") == 0);
  CHECK_OK(canonicalize(f, kept, strlen(kept), buf, sizeof(buf), &n, &e_));
  CHECK(strcmp(buf, "http://shop.keep.example/p?id=7&utm_source=x") == 0);
  CHECK(Insert(f, url) == 1);
  CHECK(Insert(f, "http://t.example/p?id=7&gclid=zz") == 0);
  CHECK_OK(close(f, &e_));

  /* Reopened by a caller compiled before the fields: the state keeps the rule and exceptions. */
  older = o;
  older.struct_size = offsetof(urlsieve_options, strip_tracking_params);
  older.strip_tracking_params = 0;
  older.tracking_exceptions = NULL;
  older.tracking_exception_count = 0;
  f = NULL;
  CHECK_OK(open(&older, &f, &e_));
  if (f == NULL) return;
  CHECK(Insert(f, "http://t.example/p?id=7&msclkid=1") == 0);
  CHECK_OK(canonicalize(f, kept, strlen(kept), buf, sizeof(buf), &n, &e_));
  CHECK(strcmp(buf, "http://shop.keep.example/p?id=7&utm_source=x") == 0);
  CHECK_OK(close(f, &e_));

  /* In memory, without the rule: the parameters stay. */
  urlsieve_options_init(&o);
  f = NULL;
  CHECK_OK(open(&o, &f, &e_));
  if (f == NULL) return;
  CHECK_OK(canonicalize(f, url, strlen(url), buf, sizeof(buf), &n, &e_));
  CHECK(strcmp(buf, url) == 0);
  CHECK_OK(close(f, &e_));

  bad[0] = "no-colon";
  o.strip_tracking_params = 1;
  o.tracking_exceptions = bad;
  o.tracking_exception_count = 1;
  f = NULL;
  CHECK(urlsieve_open(&o, &f, &e) == URLSIEVE_INVALID_ARGUMENT);
  CHECK(strstr(e.message, "no-colon") != NULL);
  CHECK(f == NULL);
  o.tracking_exceptions = NULL;
  CHECK(urlsieve_open(&o, &f, &e) == URLSIEVE_INVALID_ARGUMENT);
  CHECK(f == NULL);
  RemoveTree(root);
  free(root);
}

int main(void) {
  TestSpellingsAreOneUrl();
  TestInvalidUrlIsAnErrorWithAReason();
  TestBatch();
  TestCanonicalizeAndStats();
  TestBadOptions();
  TestPersistence(0);
  TestPersistence(1);
  TestCorruptStateDirIsAnErrorAndUntouched();
  TestTruncatedSnapshotIsAnError();
  TestStateDirIsLocked();
  TestDamagedStateDbMessageNamesTheFile();
  TestRebuildOnlyOnRequest();
  TestConcurrentInsertsExactlyOneNew();
  TestRevisitAfter();
  TestForget();
  TestStripTrackingParams();
  atexit(StopRedis);
  TestRedisSharedSet();
  if (failures != 0) {
    fprintf(stderr, "c_api_test: %d check(s) failed\n", failures);
    return 1;
  }
  printf("c_api_test: all checks passed\n");
  return 0;
}
