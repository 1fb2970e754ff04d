"""urlsieve.SeenFilter from Python: spellings, batches, errors, persistence, threads."""

import threading

import pytest

import urlsieve


def test_spellings_of_one_url_are_one_url():
    seen = urlsieve.SeenFilter(capacity=1000)
    assert seen.insert_if_new("http://Example.COM/a/./b?x=1#top") is True
    assert seen.insert_if_new("HTTP://example.com:80/a/b?x=1") is False
    assert seen.insert_if_new(b"http://example.com/a/%62?x=1") is False
    assert seen.insert_if_new("http://example.com/a/c") is True
    assert seen.canonicalize("HTTP://Example.com:80/a/../b#x") == "http://example.com/b"


def test_contains_does_not_insert():
    seen = urlsieve.SeenFilter(capacity=1000)
    assert "http://a.example/" not in seen
    assert seen.insert_if_new("http://a.example/") is True
    assert "http://A.example:80/#f" in seen


def test_insert_many_accepts_any_iterable_and_dedups_within_the_batch():
    seen = urlsieve.SeenFilter(capacity=1000)
    seen.insert_if_new("http://b.example/3")
    urls = (u for u in ["http://b.example/1", b"http://B.example/1#f", bytearray(b"http://b.example/2"),
                        "http://b.example/3"])
    assert seen.insert_many(urls) == [True, False, True, False]
    assert seen.insert_many([]) == []
    assert seen.stats()["bloom_inserted"] == 3


def test_insert_many_with_an_invalid_url_raises_and_inserts_nothing():
    seen = urlsieve.SeenFilter(capacity=1000)
    with pytest.raises(ValueError, match=r"index 1 .*ftp://x/"):
        seen.insert_many(["http://c.example/1", "ftp://x/", "http://c.example/2"])
    assert "http://c.example/1" not in seen
    assert seen.stats()["bloom_inserted"] == 0


def test_insert_many_invalid_none_marks_the_slot():
    seen = urlsieve.SeenFilter(capacity=1000)
    assert seen.insert_many(["http://c.example/1", "ftp://x/", "http://c.example/1"],
                            invalid="none") == [True, None, False]
    with pytest.raises(ValueError):
        seen.insert_many([], invalid="ignore")


def test_bad_input_raises_clear_errors():
    seen = urlsieve.SeenFilter(capacity=1000)
    with pytest.raises(ValueError, match="."):
        seen.insert_if_new("not a url")
    with pytest.raises(ValueError):
        "mailto:someone@example.com" in seen
    with pytest.raises(TypeError, match="str or bytes"):
        seen.insert_if_new(42)
    with pytest.raises(TypeError):
        seen.insert_many(["http://d.example/", 42])
    with pytest.raises(UnicodeEncodeError):
        seen.insert_if_new("http://d.example/\udcff")


@pytest.mark.parametrize("kwargs", [dict(fp_rate=0), dict(fp_rate=1.5), dict(capacity=0),
                                    dict(exact=True)])
def test_bad_options_raise_value_error(kwargs):
    with pytest.raises(ValueError):
        urlsieve.SeenFilter(**kwargs)


def test_canonicalizer_rules_are_opt_in():
    plain = urlsieve.SeenFilter(capacity=100)
    ruled = urlsieve.SeenFilter(capacity=100, sort_query=True, strip_www=True,
                                drop_empty_query=True, collapse_slashes=True,
                                strip_session_ids=True)
    url = "http://www.e.example//a//b?z=1&a=2"
    assert plain.canonicalize(url) == "http://www.e.example//a//b?z=1&a=2"
    assert ruled.canonicalize(url) == "http://e.example/a/b?a=2&z=1"


# A URL that each rule, alone, changes.
RULE_EXAMPLES = {
    "sort_query": ("http://e.example/?z=1&a=2", "http://e.example/?a=2&z=1"),
    "drop_empty_query": ("http://e.example/p?", "http://e.example/p"),
    "strip_session_ids": ("http://e.example/p;jsessionid=abc?sid=1&x=2", "http://e.example/p?x=2"),
    "strip_www": ("http://www.e.example/", "http://e.example/"),
    "collapse_slashes": ("http://e.example/a//b", "http://e.example/a/b"),
    "strip_tracking_params": ("http://e.example/p?utm_source=x&id=1&fbclid=y",
                              "http://e.example/p?id=1"),
}


def test_each_rule_in_canonicalize_rules_is_a_keyword():
    # The names are part of the Python API: renaming one breaks callers.
    assert urlsieve.CANONICALIZE_RULES == tuple(RULE_EXAMPLES)
    plain = urlsieve.SeenFilter(capacity=100)
    for rule, (url, key) in RULE_EXAMPLES.items():
        assert plain.canonicalize(url) == url
        assert urlsieve.SeenFilter(capacity=100, **{rule: True}).canonicalize(url) == key, rule
        assert urlsieve.SeenFilter(capacity=100, **{rule: False}).canonicalize(url) == url, rule


def test_rule_keywords_are_checked():
    with pytest.raises(TypeError, match="unexpected keyword argument 'sort_querry'"):
        urlsieve.SeenFilter(capacity=100, sort_querry=True)
    with pytest.raises(TypeError, match="strip_www must be a bool, not str"):
        urlsieve.SeenFilter(capacity=100, strip_www="yes")
    with pytest.raises(TypeError):
        urlsieve.SeenFilter(100)  # keyword-only, as before
    # What a bool parameter accepted before: anything with __bool__ except str, and None.
    assert urlsieve.SeenFilter(capacity=100, strip_www=1).canonicalize("http://www.e.example/") == (
        "http://e.example/")
    assert urlsieve.SeenFilter(capacity=100, strip_www=None).canonicalize(
        "http://www.e.example/") == "http://www.e.example/"


def test_tracking_exceptions_keep_a_parameter_on_a_host(tmp_path):
    url = "http://shop.keep.example/p?utm_source=x&id=1&gclid=2"
    ruled = urlsieve.SeenFilter(capacity=100, strip_tracking_params=True,
                                tracking_exceptions=["Keep.Example:utm_source"])
    assert ruled.canonicalize(url) == "http://shop.keep.example/p?utm_source=x&id=1"
    assert ruled.canonicalize("http://other.example/?utm_source=x") == "http://other.example/"
    # Without the rule the exceptions change nothing; None is no exceptions.
    assert urlsieve.SeenFilter(capacity=100, tracking_exceptions=["a.example:x"]).canonicalize(
        url) == url
    assert urlsieve.SeenFilter(capacity=100, strip_tracking_params=True,
                               tracking_exceptions=None).canonicalize(url) == (
        "http://shop.keep.example/p?id=1")
    with pytest.raises(ValueError, match="HOST:NAME"):
        urlsieve.SeenFilter(capacity=100, strip_tracking_params=True,
                            tracking_exceptions=["no-colon"])
    with pytest.raises(TypeError, match="list of"):
        urlsieve.SeenFilter(capacity=100, tracking_exceptions="a.example:x")
    with pytest.raises(TypeError, match="list of"):
        urlsieve.SeenFilter(capacity=100, tracking_exceptions=[1, 2])

    # A state keeps the rule and its exceptions: reopened without them, it keys as before.
    state = str(tmp_path / "state")
    with urlsieve.SeenFilter(capacity=100, state_dir=state, strip_tracking_params=True,
                             tracking_exceptions=["keep.example:utm_source"]) as seen:
        assert seen.insert_if_new("http://t.example/?id=1&utm_campaign=a") is True
    with urlsieve.SeenFilter(capacity=100, state_dir=state) as again:
        assert again.insert_if_new("http://t.example/?id=1&msclkid=b") is False
        assert again.canonicalize(url) == "http://shop.keep.example/p?utm_source=x&id=1"


@pytest.mark.parametrize("exact", [False, True])
def test_with_saves_and_a_reopened_filter_remembers(tmp_path, exact):
    state = str(tmp_path / "state")
    with urlsieve.SeenFilter(capacity=1000, state_dir=state, exact=exact) as seen:
        assert seen.insert_many(["http://f.example/1", "http://f.example/2"]) == [True, True]
        assert seen.state_dir == state
    assert seen.closed
    with pytest.raises(ValueError, match="closed"):
        seen.insert_if_new("http://f.example/3")
    seen.close()  # a second close is a no-op

    with urlsieve.SeenFilter(capacity=5, state_dir=state) as again:
        assert again.insert_if_new("http://F.example/1") is False
        assert again.insert_if_new("http://f.example/3") is True
        stats = again.stats()
        assert stats["capacity"] == 1000  # the stored parameters win
        assert stats["exact"] is exact
        assert any("capacity" in n for n in again.notices)


def test_corrupt_state_dir_is_an_error_and_left_alone(tmp_path):
    db = tmp_path / "state.db"
    garbage = b"not an SQLite database" * 10
    db.write_bytes(garbage)
    with pytest.raises(urlsieve.Error):
        urlsieve.SeenFilter(state_dir=str(tmp_path))
    assert db.read_bytes() == garbage


def test_a_state_dir_is_locked_until_close(tmp_path):
    # Issue 10: two users of one state directory lost each other's keys. The second open is
    # refused, naming the holder (this process), until the first is closed.
    import os
    state = str(tmp_path / "state")
    first = urlsieve.SeenFilter(state_dir=state)
    with pytest.raises(urlsieve.Error, match=r"in use by process %d" % os.getpid()):
        urlsieve.SeenFilter(state_dir=state)
    first.close()
    with urlsieve.SeenFilter(state_dir=state) as second:
        assert second.insert_if_new("http://l.example/") is True


def test_a_missing_snapshot_is_rebuilt_only_on_request(tmp_path):
    state = tmp_path / "state"
    with urlsieve.SeenFilter(state_dir=str(state), exact=True) as seen:
        seen.insert_many(["http://r.example/1", "http://r.example/2"])
    (state / "bloom.snap").unlink()
    with pytest.raises(urlsieve.Error, match="bloom.snap is missing"):
        urlsieve.SeenFilter(state_dir=str(state), exact=True)
    with urlsieve.SeenFilter(state_dir=str(state), exact=True, rebuild_bloom=True) as seen:
        assert any("rebuilt the Bloom filter from 2 keys" in n for n in seen.notices)
        assert seen.insert_if_new("http://r.example/2") is False
    assert (state / "bloom.snap").exists()


def test_threads_sharing_a_filter_see_each_url_new_exactly_once():
    seen = urlsieve.SeenFilter(capacity=100_000)
    urls = [f"http://g.example/{i}" for i in range(20_000)]
    counts = []

    def work():
        news = 0
        for start in range(0, len(urls), 1000):
            news += sum(1 for r in seen.insert_many(urls[start:start + 1000]) if r)
        counts.append(news)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(counts) == len(urls)


def test_close_from_another_thread_while_inserting_is_safe():
    seen = urlsieve.SeenFilter(capacity=100_000)
    urls = [f"http://h.example/{i}" for i in range(50_000)]
    errors = []

    def work():
        try:
            while True:
                seen.insert_many(urls)
        except ValueError as e:  # "closed": the expected way out
            errors.append(str(e))

    t = threading.Thread(target=work)
    t.start()
    seen.close()
    t.join()
    assert errors and "closed" in errors[0]



@pytest.mark.parametrize("revisit_after, seconds", [
    ("7d", 604800), (3600, 3600), (7200.0, 7200), (__import__("datetime").timedelta(hours=2), 7200)])
def test_revisit_after_is_stored_and_reported(tmp_path, revisit_after, seconds):
    state = str(tmp_path / "state")
    with urlsieve.SeenFilter(capacity=1000, state_dir=state, revisit_after=revisit_after,
                             generations=5) as seen:
        assert seen.insert_if_new("http://r.example/") is True
        assert seen.insert_if_new("http://r.example/") is False
        stats = seen.stats()
        assert stats["revisit_after"] == seconds and stats["generations"] == 5
        assert stats["live_generations"] >= 1 and stats["bloom_bits_per_key"] > 0
    # Reopened without it: the state keeps its own, and says so.
    with urlsieve.SeenFilter(capacity=1000, state_dir=state) as seen:
        assert seen.insert_if_new("http://r.example/") is False
        assert seen.stats()["revisit_after"] == seconds
        assert any("revisit-after" in n for n in seen.notices)


def test_exact_mode_takes_revisit_after(tmp_path):
    # The exact store ages keys by their first-seen time (to the second): no generations.
    state = str(tmp_path / "state")
    with urlsieve.SeenFilter(capacity=1000, state_dir=state, exact=True,
                             revisit_after="1h") as seen:
        assert seen.insert_many(["http://e.example/1", "http://e.example/2"]) == [True, True]
        assert seen.insert_if_new("http://e.example/1") is False
        stats = seen.stats()
        assert stats["exact"] and stats["revisit_after"] == 3600 and stats["generations"] == 0
    with urlsieve.SeenFilter(capacity=1000, state_dir=state, exact=True) as seen:
        assert "http://e.example/2" in seen
        assert seen.stats()["revisit_after"] == 3600


@pytest.mark.parametrize("kwargs, error", [
    (dict(revisit_after="7 days"), ValueError),
    (dict(revisit_after=-1), ValueError),
    (dict(revisit_after=1.5), ValueError),
    (dict(revisit_after=True), TypeError),
    (dict(revisit_after=[1]), TypeError),
    (dict(revisit_after="1h", generations=0), ValueError),
    (dict(revisit_after="1h", exact=True, state_dir=None), ValueError),
])
def test_bad_revisit_after_raises(kwargs, error):
    with pytest.raises(error):
        urlsieve.SeenFilter(capacity=1000, **kwargs)


def test_a_filter_inherited_through_fork_raises_in_the_child(tmp_path):
    import os
    f = urlsieve.SeenFilter(state_dir=str(tmp_path / "state"), capacity=10_000)
    assert f.insert_if_new("http://fork.example/parent")
    pid = os.fork()
    if pid == 0:  # the child: the exit code is the test's answer
        code = 1
        try:
            f.insert_if_new("http://fork.example/child")
        except urlsieve.Error as error:
            code = 0 if "fork()" in str(error) else 2
        f.close()  # neither saves nor closes the parent's state
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert f.insert_if_new("http://fork.example/after")
    f.close()
    with urlsieve.SeenFilter(state_dir=str(tmp_path / "state")) as again:
        assert "http://fork.example/parent" in again
        assert "http://fork.example/after" in again
        assert "http://fork.example/child" not in again
