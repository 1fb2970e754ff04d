/* The content-seen part of the C API (dedup/urlsieve.h, urlsieve_content_* and the fingerprint
 * functions) exercised from C: fingerprints, the verdicts of a set in memory (first, exact, near,
 * refetch; the first copy's id and data in the caller's buffers, cut short as snprintf does),
 * forgetting, bad arguments, older option structs, concurrent tests of one page, a handle used
 * after fork(), and a set shared in Redis by two handles (a real redis-server this program starts
 * on a free loopback port and kills at exit). Exits non-zero if a check failed. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

/* A call that must succeed; prints the error's message otherwise. */
#define CHECK_OK(call, error)                                                              \
  do {                                                                                     \
    if ((call) != URLSIEVE_OK) {                                                           \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, error.message); \
      ++failures;                                                                          \
    }                                                                                      \
  } while (0)

/* The caller's buffers of a verdict: big enough for any copy. */
typedef struct Verdict {
  urlsieve_content_verdict v;
  char id[URLSIEVE_CONTENT_COPY_MAX + 1];
  char data[URLSIEVE_CONTENT_COPY_MAX + 1];
} Verdict;

static void InitVerdict(Verdict* out) {
  urlsieve_content_verdict_init(&out->v);
  out->v.first_id = out->id;
  out->v.first_id_capacity = sizeof(out->id);
  out->v.first_data = out->data;
  out->v.first_data_capacity = sizeof(out->data);
}

static urlsieve_content_set* OpenLocal(int max_distance, int near) {
  urlsieve_content_options o;
  urlsieve_content_set* set = NULL;
  urlsieve_error e;
  urlsieve_content_options_init(&o);
  o.max_distance = max_distance;
  o.near = near;
  if (urlsieve_content_set_open(&o, &set, &e) != URLSIEVE_OK) {
    fprintf(stderr, "urlsieve_content_set_open: %s\n", e.message);
    exit(1);
  }
  return set;
}

/* Tests a page (id and data as C strings; simhash 0 with has_simhash 0 for none); returns the
 * status, the verdict in *out. */
static urlsieve_status Test(urlsieve_content_set* set, uint64_t digest, uint64_t simhash,
                            int has_simhash, const char* id, const char* data, Verdict* out) {
  urlsieve_error e;
  urlsieve_status s;
  InitVerdict(out);
  memset(&e, 0, sizeof(e));
  s = urlsieve_content_test(set, digest, simhash, has_simhash, id, strlen(id), data,
                            data == NULL ? 0 : strlen(data), &out->v, &e);
  if (s != URLSIEVE_OK && s != URLSIEVE_INVALID_ARGUMENT) {
    fprintf(stderr, "urlsieve_content_test(%s): %s\n", id, e.message);
  }
  return s;
}

static uint64_t Size(urlsieve_content_set* set) {
  uint64_t pages = 0;
  urlsieve_error e;
  CHECK_OK(urlsieve_content_set_size(set, &pages, &e), e);
  return pages;
}

/* A text of `words` pseudo-random words (a fixed sequence), with word `edit` replaced. */
static void MakeText(char* out, size_t size, int words, int edit) {
  unsigned long state = 12345;
  size_t at = 0;
  int i;
  out[0] = '\0';
  for (i = 0; i < words; ++i) {
    char word[16];
    int len;
    int j;
    state = state * 6364136223846793005UL + 1442695040888963407UL;
    len = 3 + (int)((state >> 33) % 6);
    for (j = 0; j < len; ++j) word[j] = (char)('a' + (int)((state >> (13 + 3 * j)) % 26));
    word[len] = '\0';
    if (i == edit) strcpy(word, "EDITED");
    at += (size_t)snprintf(out + at, size - at, "%s%s", i == 0 ? "" : " ", word);
  }
}

static void TestFingerprints(void) {
  static char text[20000];
  static char edited[20000];
  uint64_t a;
  uint64_t digest = 0;
  const char* fox;
  const char* shouted;
  const char* sha1_of_nothing = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"; /* SHA-1 of "" */

  /* Words are runs of letters and digits, ASCII lowercased: punctuation and case do not count. */
  fox = "The quick brown fox jumps over the lazy dog";
  shouted = "the QUICK brown, fox -- jumps over the lazy dog!";
  a = urlsieve_simhash(fox, strlen(fox), 3);
  CHECK(a != 0);
  CHECK(a == urlsieve_simhash(shouted, strlen(shouted), 3));
  CHECK(a != urlsieve_simhash(fox, strlen(fox), 1));
  CHECK(urlsieve_simhash("", 0, 3) == 0);
  CHECK(urlsieve_simhash(" ,;. ", 5, 3) == 0);
  CHECK(urlsieve_simhash(NULL, 10, 3) == 0);
  /* shingle_words outside 1..16 is clamped. */
  CHECK(urlsieve_simhash("a b c d e f g", 13, 0) == urlsieve_simhash("a b c d e f g", 13, 1));
  CHECK(urlsieve_simhash("a b c d e f g", 13, 99) == urlsieve_simhash("a b c d e f g", 13, 16));
  /* The construction is documented to the bit (dedup/content/simhash.h): the Python module's
   * test (tests/python/test_content_seen.py) pins the same values. */
  CHECK(a == UINT64_C(0xbb5f396648d2929e));
  CHECK(urlsieve_payload_digest("abc", 3) == UINT64_C(0x78af5f94892f3950)); /* XXH3-64 */

  /* One word edited in 2000: a near duplicate at the crawler's k = 3 (in a short text one word
   * moves a few bits more); another text is far. */
  MakeText(text, sizeof(text), 2000, -1);
  MakeText(edited, sizeof(edited), 2000, 1000);
  CHECK(strcmp(text, edited) != 0);
  CHECK(urlsieve_hamming_distance(urlsieve_simhash(text, strlen(text), 3),
                                  urlsieve_simhash(edited, strlen(edited), 3)) <= 3);
  CHECK(urlsieve_hamming_distance(urlsieve_simhash(text, strlen(text), 3), a) > 3);

  CHECK(urlsieve_hamming_distance(0, 0) == 0);
  CHECK(urlsieve_hamming_distance(0, UINT64_MAX) == 64);
  CHECK(urlsieve_hamming_distance(UINT64_C(0xF0), UINT64_C(0x0F)) == 8);

  CHECK(urlsieve_payload_digest("abc", 3) == urlsieve_payload_digest("abc", 3));
  CHECK(urlsieve_payload_digest("abc", 3) != urlsieve_payload_digest("abd", 3));
  CHECK(urlsieve_payload_digest(NULL, 0) == urlsieve_payload_digest("", 0));

  CHECK(urlsieve_warc_payload_digest(sha1_of_nothing, strlen(sha1_of_nothing), &digest) == 1);
  CHECK(digest == UINT64_C(0xda39a3ee5e6b4b0d));
  CHECK(urlsieve_warc_payload_digest("sha256:abc", 10, &digest) == 0);
  CHECK(urlsieve_warc_payload_digest("sha1:3I42", 9, &digest) == 0);
  CHECK(urlsieve_warc_payload_digest(NULL, 0, &digest) == 0);
}

static void TestVerdicts(void) {
  urlsieve_content_set* set = OpenLocal(3, 1);
  urlsieve_error e;
  Verdict r;
  const uint64_t s = UINT64_C(0x0123456789abcdef);

  CHECK(Test(set, 1, s, 1, "http://a.example/", "rec-1", &r) == URLSIEVE_OK);
  CHECK(r.v.kind == URLSIEVE_CONTENT_FIRST && r.v.refetch == 0);
  CHECK(r.v.first_id_size == 0 && r.id[0] == '\0');
  CHECK(Size(set) == 1);

  /* The same bytes under another URL: exact, naming the first copy and its data. */
  CHECK(Test(set, 1, s, 1, "http://b.example/copy", "rec-2", &r) == URLSIEVE_OK);
  CHECK(r.v.kind == URLSIEVE_CONTENT_EXACT);
  CHECK(strcmp(r.id, "http://a.example/") == 0 && r.v.first_id_size == strlen(r.id));
  CHECK(strcmp(r.data, "rec-1") == 0 && r.v.first_data_size == 5);
  CHECK(Size(set) == 1);

  /* Other bytes whose text is 2 bits away: near, with the distance. */
  CHECK(Test(set, 2, s ^ 0x81, 1, "http://c.example/near", "rec-3", &r) == URLSIEVE_OK);
  CHECK(r.v.kind == URLSIEVE_CONTENT_NEAR && r.v.distance == 2);
  CHECK(strcmp(r.id, "http://a.example/") == 0 && strcmp(r.data, "rec-1") == 0);
  CHECK(Size(set) == 2); /* a near copy's digest is recorded, with its own copy */
  CHECK(Test(set, 2, 0, 0, "http://d.example/", NULL, &r) == URLSIEVE_OK);
  CHECK(r.v.kind == URLSIEVE_CONTENT_EXACT && strcmp(r.id, "http://c.example/near") == 0);
  CHECK(strcmp(r.data, "rec-3") == 0);

  /* 4 bits away is beyond k = 3; without a simhash only the digest counts. */
  CHECK(Test(set, 3, s ^ 0xF, 1, "http://e.example/", "", &r) == URLSIEVE_OK);
  CHECK(r.v.kind == URLSIEVE_CONTENT_FIRST);
  CHECK(Test(set, 4, s, 0, "http://f.example/", "", &r) == URLSIEVE_OK);
  CHECK(r.v.kind == URLSIEVE_CONTENT_FIRST);

  /* The first page fetched again (same id): a refetch, nothing changes. */
  CHECK(Test(set, 1, s, 1, "http://a.example/", "rec-9", &r) == URLSIEVE_OK);
  CHECK(r.v.kind == URLSIEVE_CONTENT_FIRST && r.v.refetch == 1);
  CHECK(Size(set) == 4);

  /* Data is any bytes, NUL included. */
  {
    const char blob[4] = {'x', '\0', 'y', '\0'};
    InitVerdict(&r);
    CHECK_OK(urlsieve_content_test(set, 5, 0, 0, "http://g.example/", 17, blob, 4, &r.v, &e), e);
    CHECK(r.v.kind == URLSIEVE_CONTENT_FIRST);
    InitVerdict(&r);
    CHECK_OK(urlsieve_content_test(set, 5, 0, 0, "http://h.example/", 17, NULL, 0, &r.v, &e), e);
    CHECK(r.v.kind == URLSIEVE_CONTENT_EXACT);
    CHECK(r.v.first_data_size == 4 && memcmp(r.data, blob, 4) == 0);
  }
  CHECK(urlsieve_content_set_close(set, &e) == URLSIEVE_OK);
  CHECK(urlsieve_content_set_close(NULL, &e) == URLSIEVE_OK);
}

/* Small buffers: the copy is cut as snprintf cuts, its size says so; NULL buffers get nothing
 * but the sizes. The verdict itself is whole either way. */
static void TestCallerBuffers(void) {
  urlsieve_content_set* set = OpenLocal(3, 1);
  urlsieve_content_verdict v;
  urlsieve_error e;
  Verdict r;
  char small[8];
  CHECK(Test(set, 7, 0, 0, "http://first.example/page", "0123456789", &r) == URLSIEVE_OK);

  urlsieve_content_verdict_init(&v);
  memset(small, '#', sizeof(small));
  v.first_id = small;
  v.first_id_capacity = sizeof(small);
  CHECK_OK(urlsieve_content_test(set, 7, 0, 0, "http://other.example/", 21, NULL, 0, &v, &e), e);
  CHECK(v.kind == URLSIEVE_CONTENT_EXACT);
  CHECK(v.first_id_size == strlen("http://first.example/page")); /* >= capacity: cut short */
  CHECK(memcmp(small, "http://\0", 8) == 0);
  CHECK(v.first_data_size == 10); /* no data buffer: only its size */

  urlsieve_content_verdict_init(&v);
  v.first_id_capacity = 10; /* a capacity without a buffer */
  CHECK(urlsieve_content_test(set, 7, 0, 0, "http://x.example/", 17, NULL, 0, &v, &e) ==
        URLSIEVE_INVALID_ARGUMENT);
  CHECK(e.code == URLSIEVE_INVALID_ARGUMENT && strstr(e.message, "buffer") != NULL);
  urlsieve_content_verdict_init(&v);
  v.struct_size = 0; /* not initialized */
  CHECK(urlsieve_content_test(set, 7, 0, 0, "http://x.example/", 17, NULL, 0, &v, &e) ==
        URLSIEVE_INVALID_ARGUMENT);
  CHECK(strstr(e.message, "struct_size") != NULL);
  CHECK(Size(set) == 1); /* neither refused call recorded anything */
  urlsieve_content_set_close(set, &e);
}

static void TestBadArguments(void) {
  urlsieve_content_set* set = OpenLocal(3, 1);
  urlsieve_content_options o;
  urlsieve_content_set* other = NULL;
  urlsieve_error e;
  Verdict r;
  static char long_id[URLSIEVE_CONTENT_COPY_MAX + 2];
  uint64_t pages = 0;
  int forgotten = -1;

  /* Ids of 1..URLSIEVE_CONTENT_COPY_MAX bytes without NUL; data up to the same. */
  CHECK(Test(set, 1, 0, 0, "", NULL, &r) == URLSIEVE_INVALID_ARGUMENT);
  InitVerdict(&r);
  CHECK(urlsieve_content_test(set, 1, 0, 0, "a\0b", 3, NULL, 0, &r.v, &e) ==
        URLSIEVE_INVALID_ARGUMENT);
  CHECK(strstr(e.message, "NUL") != NULL);
  memset(long_id, 'i', URLSIEVE_CONTENT_COPY_MAX + 1);
  CHECK(Test(set, 1, 0, 0, long_id, NULL, &r) == URLSIEVE_INVALID_ARGUMENT);
  CHECK(Test(set, 1, 0, 0, "http://ok.example/", long_id, &r) == URLSIEVE_INVALID_ARGUMENT);
  long_id[URLSIEVE_CONTENT_COPY_MAX] = '\0'; /* exactly the maximum: accepted */
  CHECK(Test(set, 1, 0, 0, long_id, long_id, &r) == URLSIEVE_OK);
  CHECK(Test(set, 1, 0, 0, "http://copy.example/", NULL, &r) == URLSIEVE_OK);
  CHECK(r.v.kind == URLSIEVE_CONTENT_EXACT && strcmp(r.id, long_id) == 0);
  CHECK(r.v.first_id_size == URLSIEVE_CONTENT_COPY_MAX && strcmp(r.data, long_id) == 0);
  CHECK(Size(set) == 1);

  /* NULL where a pointer is needed. */
  InitVerdict(&r);
  CHECK(urlsieve_content_test(NULL, 1, 0, 0, "x", 1, NULL, 0, &r.v, &e) ==
        URLSIEVE_INVALID_ARGUMENT);
  CHECK(urlsieve_content_test(set, 1, 0, 0, NULL, 1, NULL, 0, &r.v, &e) ==
        URLSIEVE_INVALID_ARGUMENT);
  CHECK(urlsieve_content_test(set, 1, 0, 0, "x", 1, NULL, 3, &r.v, &e) ==
        URLSIEVE_INVALID_ARGUMENT);
  CHECK(urlsieve_content_test(set, 1, 0, 0, "x", 1, NULL, 0, NULL, &e) ==
        URLSIEVE_INVALID_ARGUMENT);
  CHECK(urlsieve_content_test(set, 1, 0, 0, "x", 1, NULL, 0, NULL, NULL) ==
        URLSIEVE_INVALID_ARGUMENT); /* no error struct: the status alone */
  CHECK(urlsieve_content_forget(set, 1, 0, 0, "x", 1, NULL, &e) == URLSIEVE_INVALID_ARGUMENT);
  CHECK(urlsieve_content_set_size(NULL, &pages, &e) == URLSIEVE_INVALID_ARGUMENT);

  /* Options: max_distance 0..7, struct_size set, NULL. */
  urlsieve_content_options_init(&o);
  CHECK(o.struct_size == sizeof(o) && o.max_distance == 3 && o.near == 1);
  CHECK(o.redis_url == NULL && o.redis_name == NULL);
  o.max_distance = 8;
  CHECK(urlsieve_content_set_open(&o, &other, &e) == URLSIEVE_INVALID_ARGUMENT);
  CHECK(other == NULL && strstr(e.message, "max_distance") != NULL);
  o.max_distance = -1;
  CHECK(urlsieve_content_set_open(&o, &other, &e) == URLSIEVE_INVALID_ARGUMENT);
  urlsieve_content_options_init(&o);
  o.struct_size = 0;
  CHECK(urlsieve_content_set_open(&o, &other, &e) == URLSIEVE_INVALID_ARGUMENT);
  CHECK(strstr(e.message, "struct_size") != NULL);
  CHECK(urlsieve_content_set_open(NULL, &other, &e) == URLSIEVE_INVALID_ARGUMENT);
  urlsieve_content_options_init(&o);
  o.redis_url = "redis://127.0.0.1:1"; /* a server without a name */
  CHECK(urlsieve_content_set_open(&o, &other, &e) == URLSIEVE_INVALID_ARGUMENT);
  CHECK(strstr(e.message, "redis_name") != NULL);
  CHECK_OK(urlsieve_content_forget(set, 99, 0, 0, "nobody", 6, &forgotten, &e), e);
  CHECK(forgotten == 0);
  urlsieve_content_set_close(set, &e);
}

/* A caller compiled before the Redis fields passes a smaller struct_size: what lies past it is
 * never read (here: a "server" that would be refused), and the set is in memory. */
static void TestOlderOptionsStruct(void) {
  urlsieve_content_options o;
  urlsieve_content_set* set = NULL;
  urlsieve_error e;
  Verdict r;
  urlsieve_content_options_init(&o);
  o.struct_size = offsetof(urlsieve_content_options, redis_url);
  o.max_distance = 1;
  o.redis_url = "not a url";
  o.redis_name = NULL;
  CHECK_OK(urlsieve_content_set_open(&o, &set, &e), e);
  if (set == NULL) return;
  CHECK(Test(set, 1, 0, 1, "http://a.example/", NULL, &r) == URLSIEVE_OK);
  CHECK(Test(set, 2, 1, 1, "http://b.example/", NULL, &r) == URLSIEVE_OK);
  CHECK(r.v.kind == URLSIEVE_CONTENT_NEAR && r.v.distance == 1);
  CHECK(Test(set, 3, 3, 1, "http://c.example/", NULL, &r) == URLSIEVE_OK);
  CHECK(r.v.kind == URLSIEVE_CONTENT_FIRST); /* 2 bits: beyond max_distance 1 */
  urlsieve_content_set_close(set, &e);
}

static void TestNearOffAndForget(void) {
  urlsieve_content_set* set = OpenLocal(3, 0);
  urlsieve_error e;
  Verdict r;
  int forgotten = -1;
  CHECK(Test(set, 1, 42, 1, "http://a.example/", "one", &r) == URLSIEVE_OK);
  CHECK(Test(set, 2, 42, 1, "http://b.example/", "two", &r) == URLSIEVE_OK);
  CHECK(r.v.kind == URLSIEVE_CONTENT_FIRST); /* the simhash is ignored without the near test */
  CHECK(Test(set, 1, 0, 0, "http://c.example/", NULL, &r) == URLSIEVE_OK);
  CHECK(r.v.kind == URLSIEVE_CONTENT_EXACT && strcmp(r.id, "http://a.example/") == 0);

  /* Forgetting needs the recorded page's id; then its next test is a first again. */
  CHECK_OK(urlsieve_content_forget(set, 1, 42, 1, "http://c.example/", 17, &forgotten, &e), e);
  CHECK(forgotten == 0);
  CHECK_OK(urlsieve_content_forget(set, 1, 42, 1, "http://a.example/", 17, &forgotten, &e), e);
  CHECK(forgotten == 1);
  CHECK(Size(set) == 1);
  CHECK(Test(set, 1, 0, 0, "http://c.example/", NULL, &r) == URLSIEVE_OK);
  CHECK(r.v.kind == URLSIEVE_CONTENT_FIRST && r.v.refetch == 0);
  urlsieve_content_set_close(set, &e);

  /* And with the near test: forgetting a first frees its neighbourhood. */
  set = OpenLocal(3, 1);
  CHECK(Test(set, 1, 0xFF, 1, "http://a.example/", NULL, &r) == URLSIEVE_OK);
  CHECK_OK(urlsieve_content_forget(set, 1, 0xFF, 1, "http://a.example/", 17, &forgotten, &e), e);
  CHECK(forgotten == 1);
  CHECK(Test(set, 2, 0xFE, 1, "http://b.example/", NULL, &r) == URLSIEVE_OK);
  CHECK(r.v.kind == URLSIEVE_CONTENT_FIRST);
  urlsieve_content_set_close(set, &e);
}

enum { kThreads = 8, kPages = 500 };

typedef struct Worker {
  urlsieve_content_set* set;
  int index;
  int firsts;
  int others;
  int errors;
} Worker;

/* Every thread tests the same pages under its own ids: exactly one is first for each. */
static void* TestAll(void* arg) {
  Worker* w = (Worker*)arg;
  Verdict r;
  char id[64];
  int i;
  for (i = 0; i < kPages; ++i) {
    snprintf(id, sizeof(id), "http://t%d.example/%d", w->index, i);
    if (Test(w->set, 1000 + (uint64_t)i, 0, 0, id, id, &r) != URLSIEVE_OK) {
      ++w->errors;
    } else if (r.v.kind == URLSIEVE_CONTENT_FIRST) {
      ++w->firsts;
    } else {
      ++w->others;
    }
  }
  return NULL;
}

static void TestConcurrentExactlyOneFirst(void) {
  urlsieve_content_set* set = OpenLocal(3, 1);
  urlsieve_error e;
  pthread_t threads[kThreads];
  Worker workers[kThreads];
  int t;
  int firsts = 0;
  int others = 0;
  for (t = 0; t < kThreads; ++t) {
    memset(&workers[t], 0, sizeof(workers[t]));
    workers[t].set = set;
    workers[t].index = t;
    CHECK(pthread_create(&threads[t], NULL, TestAll, &workers[t]) == 0);
  }
  for (t = 0; t < kThreads; ++t) pthread_join(threads[t], NULL);
  for (t = 0; t < kThreads; ++t) {
    CHECK(workers[t].errors == 0);
    firsts += workers[t].firsts;
    others += workers[t].others;
  }
  CHECK(Size(set) == kPages);
  urlsieve_content_set_close(set, &e);
  CHECK(firsts == kPages);
  CHECK(others == (kThreads - 1) * kPages);
}

/* A handle opened before fork() is the parent's: the child gets FAILED_PRECONDITION. */
static void TestForkedChildGetsAnError(void) {
  urlsieve_content_set* set = OpenLocal(3, 1);
  urlsieve_error e;
  Verdict r;
  int status = 0;
  pid_t child;
  CHECK(Test(set, 1, 0, 0, "http://a.example/", NULL, &r) == URLSIEVE_OK);
  fflush(NULL);
  child = fork();
  if (child == 0) {
    urlsieve_status s;
    InitVerdict(&r);
    s = urlsieve_content_test(set, 2, 0, 0, "http://b.example/", 17, NULL, 0, &r.v, &e);
    urlsieve_content_set_close(set, &e); /* frees nothing of the parent's */
    _exit(s == URLSIEVE_FAILED_PRECONDITION && strstr(e.message, "fork") != NULL ? 0 : 1);
  }
  CHECK(child > 0);
  CHECK(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  /* The parent's handle is untouched. */
  CHECK(Test(set, 1, 0, 0, "http://c.example/", NULL, &r) == URLSIEVE_OK);
  CHECK(r.v.kind == URLSIEVE_CONTENT_EXACT && strcmp(r.id, "http://a.example/") == 0);
  urlsieve_content_set_close(set, &e);
}

static urlsieve_status OpenShared(const char* url, const char* name, int max_distance,
                                  urlsieve_content_set** set, urlsieve_error* e) {
  urlsieve_content_options o;
  urlsieve_content_options_init(&o);
  o.redis_url = url;
  o.redis_name = name;
  o.max_distance = max_distance;
  return urlsieve_content_set_open(&o, set, e);
}

/* Two handles on one name in Redis are one set; the stored max_distance is kept; a server that
 * is not there is UNAVAILABLE. */
static void TestRedisSharedSet(void) {
  char dir[] = "/tmp/urlsieve-c-content-XXXXXX";
  char url[128];
  char nowhere[64];
  urlsieve_content_set* a = NULL;
  urlsieve_content_set* b = NULL;
  urlsieve_content_set* c = NULL;
  urlsieve_error e;
  Verdict r;
  int forgotten = -1;
  int port;
  CHECK(mkdtemp(dir) != NULL);
  port = StartRedis(dir, "sesame");
  CHECK(port != 0);
  if (port == 0) return;
  snprintf(url, sizeof(url), "redis://:sesame@127.0.0.1:%d", port);

  CHECK_OK(OpenShared(url, "pages", 3, &a, &e), e);
  CHECK_OK(OpenShared(url, "pages", 3, &b, &e), e);
  if (a != NULL && b != NULL) {
    CHECK(Test(a, 10, 0xF0F0, 1, "http://a.example/", "warc-a", &r) == URLSIEVE_OK);
    CHECK(r.v.kind == URLSIEVE_CONTENT_FIRST);
    CHECK(Test(b, 10, 0xF0F0, 1, "http://b.example/", "warc-b", &r) == URLSIEVE_OK);
    CHECK(r.v.kind == URLSIEVE_CONTENT_EXACT);
    CHECK(strcmp(r.id, "http://a.example/") == 0 && strcmp(r.data, "warc-a") == 0);
    CHECK(Test(b, 11, 0xF0F1, 1, "http://c.example/", NULL, &r) == URLSIEVE_OK);
    CHECK(r.v.kind == URLSIEVE_CONTENT_NEAR && r.v.distance == 1);
    CHECK(strcmp(r.id, "http://a.example/") == 0);
    CHECK(Size(b) == 2);
    CHECK_OK(urlsieve_content_forget(b, 10, 0xF0F0, 1, "http://a.example/", 17, &forgotten, &e), e);
    CHECK(forgotten == 1);
    CHECK(Test(a, 10, 0xF0F0, 1, "http://d.example/", NULL, &r) == URLSIEVE_OK);
    CHECK(r.v.kind == URLSIEVE_CONTENT_FIRST);
  }
  /* The set was made with max_distance 3: another is refused, naming both. */
  CHECK(OpenShared(url, "pages", 2, &c, &e) == URLSIEVE_FAILED_PRECONDITION);
  CHECK(c == NULL && strstr(e.message, "max_distance") != NULL);
  urlsieve_content_set_close(a, &e);
  urlsieve_content_set_close(b, &e);

  StopRedis();
  snprintf(nowhere, sizeof(nowhere), "redis://127.0.0.1:%d", port);
  CHECK(OpenShared(nowhere, "pages", 3, &c, &e) == URLSIEVE_UNAVAILABLE);
  CHECK(c == NULL && strstr(e.message, "127.0.0.1") != NULL);
  {
    char command[128];
    snprintf(command, sizeof(command), "rm -rf '%s'", dir);
    CHECK(system(command) == 0);
  }
}

int main(void) {
  TestFingerprints();
  TestVerdicts();
  TestCallerBuffers();
  TestBadArguments();
  TestOlderOptionsStruct();
  TestNearOffAndForget();
  TestConcurrentExactlyOneFirst();
  TestForkedChildGetsAnError();
  atexit(StopRedis);
  TestRedisSharedSet();
  if (failures != 0) {
    fprintf(stderr, "c_api_content_test: %d check(s) failed\n", failures);
    return 1;
  }
  printf("c_api_content_test: all checks passed\n");
  return 0;
}
