"""The content-seen test in Python: urlsieve.simhash, hamming_distance, payload_digest,
warc_payload_digest, ContentSeenSet (in memory, and shared by two handles in a real redis-server)
and NearDuplicateIndex."""

import random
import threading

import pytest

import urlsieve

FOX = "The quick brown fox jumps over the lazy dog"


def words(n, seed=1, edit=None):
    rng = random.Random(seed)
    out = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 8)))
           for _ in range(n)]
    if edit is not None:
        out[edit] = "edited"
    return " ".join(out)


def test_simhash_is_the_documented_function():
    # The same values as the C API's test (tests/c_api/c_api_content_test.c): one construction,
    # documented to the bit in dedup/content/simhash.h.
    assert urlsieve.simhash(FOX) == 0xBB5F396648D2929E
    assert urlsieve.simhash(FOX.encode()) == urlsieve.simhash(FOX)  # bytes: UTF-8
    assert urlsieve.simhash(bytearray(FOX.encode())) == urlsieve.simhash(FOX)
    assert urlsieve.payload_digest(b"abc") == 0x78AF5F94892F3950  # XXH3-64
    assert urlsieve.payload_digest("abc") == urlsieve.payload_digest(b"abc")
    # Words are runs of letters and digits, ASCII lowercased.
    shouted = "the QUICK brown, fox -- jumps over the lazy dog!"
    assert urlsieve.simhash(shouted) == urlsieve.simhash(FOX)
    assert urlsieve.simhash(FOX, shingle_words=1) != urlsieve.simhash(FOX)
    assert urlsieve.simhash("") == 0 and urlsieve.simhash(" .,; ") == 0
    # Any script forms words (bytes >= 0x80 are letters).
    assert urlsieve.simhash("Привет мир как дела") != urlsieve.simhash("Привет мир как дело")
    for bad in (0, 17):
        with pytest.raises(ValueError, match="shingle_words"):
            urlsieve.simhash(FOX, shingle_words=bad)
    with pytest.raises(TypeError, match="text must be str or bytes"):
        urlsieve.simhash(42)


def test_near_texts_are_near_and_others_are_not():
    text, edited, other = words(2000), words(2000, edit=1500), words(2000, seed=2)
    assert urlsieve.hamming_distance(urlsieve.simhash(text), urlsieve.simhash(edited)) <= 3
    assert urlsieve.hamming_distance(urlsieve.simhash(text), urlsieve.simhash(other)) > 3
    big = words(20000)  # over the size at which the GIL is released: the same function
    assert urlsieve.simhash(big) == urlsieve.simhash(big.encode())


def test_hamming_distance_and_warc_digest():
    assert urlsieve.hamming_distance(0, 2**64 - 1) == 64
    assert urlsieve.hamming_distance(0xF0, 0x0F) == 8
    with pytest.raises(ValueError):
        urlsieve.hamming_distance(-1, 0)
    with pytest.raises(ValueError):
        urlsieve.hamming_distance(2**64, 0)
    with pytest.raises(TypeError):
        urlsieve.hamming_distance(True, 0)
    # SHA-1 of "" is da39a3ee5e6b4b0d...; its first 8 bytes.
    sha1_of_nothing = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"
    assert urlsieve.warc_payload_digest(sha1_of_nothing) == 0xDA39A3EE5E6B4B0D
    assert urlsieve.warc_payload_digest("sha256:abc") is None


def test_verdicts_of_a_set_in_memory():
    page, near_text = words(2000), words(2000, edit=1500)
    with urlsieve.ContentSeenSet() as pages:
        assert pages.max_distance == 3 and pages.near and pages.redis_name is None
        v = pages.test(b"<p>one</p>", page, "http://a.example/", data="rec-a")
        assert v.kind == "first" and not v.duplicate and not v.refetch
        assert v.first_id is None and v.first_data is None
        assert v.digest == urlsieve.payload_digest(b"<p>one</p>")
        assert v.simhash == urlsieve.simhash(page)
        v = pages.test(b"<p>one</p>", page, "http://b.example/copy")
        assert (v.kind, v.first_id, v.first_data) == ("exact", "http://a.example/", "rec-a")
        assert v.duplicate and "exact" in repr(v)
        v = pages.test(b"<p>one, edited</p>", near_text, "http://c.example/")
        assert v.kind == "near" and v.first_id == "http://a.example/"
        assert v.distance == urlsieve.hamming_distance(urlsieve.simhash(page),
                                                       urlsieve.simhash(near_text))
        assert 0 <= v.distance <= 3
        # Without a text only the bytes count.
        assert pages.test(b"other", None, "http://d.example/").kind == "first"
        # The same page again: a refetch.
        v = pages.test(b"<p>one</p>", page, "http://a.example/")
        assert v.kind == "first" and v.refetch
        assert len(pages) == 3
        # Data: str or bytes; bytes that are not UTF-8 come back as bytes.
        pages.test(b"blob", None, "http://e.example/", data=b"\xff\x00x")
        assert pages.test(b"blob", None, "http://f.example/").first_data == b"\xff\x00x"
        # Fingerprints computed elsewhere.
        digest = urlsieve.payload_digest(b"<p>one</p>")
        v = pages.test_fingerprint(digest, None, "http://g.example/")
        assert v.kind == "exact" and v.first_id == "http://a.example/"
        v = pages.test_fingerprint(12345, urlsieve.simhash(page) ^ 0b101, "http://h.example/")
        assert v.kind == "near" and v.distance == 2
        # Forgetting a first: its next copy is a first.
        assert not pages.forget(b"<p>one</p>", page, "http://b.example/copy")  # not b's
        assert pages.forget(b"<p>one</p>", page, "http://a.example/")
        assert pages.test(b"<p>one</p>", page, "http://b.example/copy").kind == "first"
        other = urlsieve.payload_digest(b"other")
        assert pages.forget_fingerprint(other, None, "http://d.example/")
        # Bad ids and data: ValueError, nothing recorded.
        before = len(pages)
        for bad_id in ("", "a\0b", "x" * 4097):
            with pytest.raises(ValueError):
                pages.test(b"new", None, bad_id)
        with pytest.raises(ValueError):
            pages.test(b"new", None, "http://i.example/", data="d" * 4097)
        with pytest.raises(TypeError):
            pages.test(b"new", None, 42)
        assert len(pages) == before
    assert pages.closed
    with pytest.raises(ValueError, match="closed"):
        pages.test(b"x", None, "http://a.example/")


def test_options_of_a_set():
    exact_only = urlsieve.ContentSeenSet(near=False)
    exact_only.test(b"a", FOX, "http://a.example/")
    assert exact_only.test(b"b", FOX, "http://b.example/").kind == "first"  # text ignored
    tight = urlsieve.ContentSeenSet(max_distance=0)
    tight.test_fingerprint(1, 0b1111, "http://a.example/")
    assert tight.test_fingerprint(2, 0b1111, "http://b.example/").kind == "near"
    assert tight.test_fingerprint(3, 0b1110, "http://c.example/").kind == "first"
    for bad in (-1, 8):
        with pytest.raises(ValueError, match="max_distance"):
            urlsieve.ContentSeenSet(max_distance=bad)
    with pytest.raises(ValueError, match="redis"):
        urlsieve.ContentSeenSet(redis="redis://127.0.0.1:1")  # no name


def test_threads_testing_one_page_get_one_first():
    pages = urlsieve.ContentSeenSet()
    firsts = []

    def run(t):
        for i in range(300):
            if pages.test(b"page %d" % i, None, f"http://t{t}.example/{i}").kind == "first":
                firsts.append(i)

    threads = [threading.Thread(target=run, args=(t,)) for t in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(firsts) == list(range(300))


def test_a_set_shared_in_redis(redis_server):
    a = urlsieve.ContentSeenSet(redis=redis_server.url, name="pages")
    b = urlsieve.ContentSeenSet(redis=redis_server.url, name="pages")
    text = words(2000)
    assert a.redis_name == "pages"
    assert a.test(b"body", text, "http://a.example/", data="warc-a").kind == "first"
    v = b.test(b"body", text, "http://b.example/")
    assert (v.kind, v.first_id, v.first_data) == ("exact", "http://a.example/", "warc-a")
    v = b.test(b"other body", words(2000, edit=1500), "http://c.example/")
    assert v.kind == "near" and v.first_id == "http://a.example/"
    a.close()
    b.close()
    with pytest.raises(urlsieve.Error, match="max_distance"):
        urlsieve.ContentSeenSet(max_distance=2, redis=redis_server.url, name="pages")
    port = redis_server.port
    redis_server.stop()
    with pytest.raises(urlsieve.UnavailableError, match=f"127.0.0.1:{port}"):
        urlsieve.ContentSeenSet(redis=f"redis://127.0.0.1:{port}", name="pages")


def test_near_duplicate_index():
    index = urlsieve.NearDuplicateIndex()
    assert index.max_distance == 3 and len(index) == 0
    assert index.find_or_insert(0xFF00, 1) is None
    assert index.find_or_insert(0xFF01, 2) == (0xFF00, 1, 1)  # found, not inserted
    assert len(index) == 1
    index.insert(0xFF01, 2)  # inserted unconditionally
    assert index.find(0xFF01) == (0xFF01, 2, 0)  # the nearest
    assert index.find(0xFF0F) == (0xFF01, 2, 3)  # 4 bits from the first, 3 from the second
    assert index.find(0x00FF) is None  # 16 bits away
    assert index.find(0xFF00 ^ 0b111 << 40) == (0xFF00, 1, 3)
    assert index.erase(0xFF00, 1) and not index.erase(0xFF00, 1)
    assert index.find(0xFF00) == (0xFF01, 2, 1)
    assert index.memory_bytes > 0
    with pytest.raises(ValueError):
        index.insert(1, 2**48)
    with pytest.raises(ValueError):
        urlsieve.NearDuplicateIndex(max_distance=8)
    # Many random fingerprints: every one finds itself; a 3-bit neighbour finds it.
    rng = random.Random(7)
    many = urlsieve.NearDuplicateIndex(3)
    fps = [rng.getrandbits(64) for _ in range(2000)]
    for i, fp in enumerate(fps):
        many.insert(fp, i)
    for i, fp in enumerate(fps[:200]):
        flip = fp ^ (1 << rng.randrange(64)) ^ (1 << rng.randrange(64)) ^ (1 << rng.randrange(64))
        found = many.find(flip)
        assert found is not None and found[2] <= 3
        assert many.find(fp) == (fp, i, 0)
