"""urlsieve.SeenFilter(redis=..., name=...): a seen set shared in a real redis-server."""

import threading

import pytest

import urlsieve
from redis_server import RedisServer, free_port


def test_two_filters_on_one_name_are_one_set(redis_server):
    a = urlsieve.SeenFilter(redis=redis_server.url, name="crawl", capacity=10_000)
    b = urlsieve.SeenFilter(redis=redis_server.url, name="crawl", capacity=10_000)
    assert a.redis_name == "crawl" and a.state_dir is None
    assert a.insert_if_new("http://Example.com/a/./b#top") is True
    assert b.insert_if_new("HTTP://example.com:80/a/b") is False
    assert b.insert_many(["http://example.com/c", "ftp://x/", "http://example.com/c"],
                         invalid="none") == [True, None, False]
    assert "http://example.com/c" in a
    assert "http://example.com/never" not in a
    assert a.insert_key_if_new("urlsieve-req:POST:0:http://example.com/") is True
    assert b.insert_key_if_new("urlsieve-req:POST:0:http://example.com/") is False
    other = urlsieve.SeenFilter(redis=redis_server.url, name="other", capacity=10_000)
    assert other.insert_if_new("http://example.com/c") is True  # another name, another set
    for f in (a, b, other):
        f.save()  # nothing to save: every insert is in Redis already
        f.close()


def test_threads_sharing_a_set_are_told_new_once(redis_server):
    filters = [urlsieve.SeenFilter(redis=redis_server.url, name="threads", capacity=10_000)
               for _ in range(2)]
    urls = [f"http://t.example/{i}" for i in range(2000)]
    new = []
    lock = threading.Lock()

    def run(f):
        got = 0
        for start in range(0, len(urls), 100):
            got += sum(f.insert_many(urls[start:start + 100]))
        with lock:
            new.append(got)

    threads = [threading.Thread(target=run, args=(filters[i % 2],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(new) == len(urls)


def test_the_stored_parameters_win_with_a_notice(redis_server):
    with urlsieve.SeenFilter(redis=redis_server.url, name="stored", capacity=5000, exact=True,
                             sort_query=True) as first:
        assert first.notices == []
        assert first.insert_if_new("http://s.example/?b=2&a=1") is True
    again = urlsieve.SeenFilter(redis=redis_server.url, name="stored", capacity=99999,
                                fp_rate=0.01)
    assert again.notices, "the stored parameters override the requested ones: say so"
    stats = again.stats()
    assert stats["capacity"] == 5000 and stats["exact"]
    assert again.canonicalize("http://s.example/?b=2&a=1") == "http://s.example/?a=1&b=2"
    assert again.insert_if_new("http://s.example/?a=1&b=2") is False


@pytest.mark.parametrize("kwargs", [
    dict(name="n"),                              # a name without a URL
    dict(redis="REDIS"),                         # a URL without a name
    dict(redis="redis://127.0.0.1:notaport", name="n"),
    dict(redis="REDIS", name="n", state_dir="STATE"),
    dict(redis="REDIS", name="n", rebuild_bloom=True),
])
def test_bad_options_raise_value_error(redis_server, tmp_path, kwargs):
    kwargs = {k: {"REDIS": redis_server.url, "STATE": str(tmp_path / "state")}.get(v, v)
              for k, v in kwargs.items()}
    with pytest.raises(ValueError, match="."):
        urlsieve.SeenFilter(**kwargs)
    assert not (tmp_path / "state").exists()


def test_no_server_raises_unavailable_naming_it():
    port = free_port()  # nothing listens there
    with pytest.raises(urlsieve.UnavailableError, match=f"127.0.0.1:{port}"):
        urlsieve.SeenFilter(redis=f"redis://127.0.0.1:{port}", name="n")
    assert issubclass(urlsieve.UnavailableError, urlsieve.Error)


def test_a_wrong_password_is_a_clear_error(tmp_path):
    server = RedisServer(tmp_path / "redis", password="sesame")
    try:
        with urlsieve.SeenFilter(redis=server.url, name="auth") as f:
            assert f.insert_if_new("http://p.example/") is True
        wrong = f"redis://:open-sesame@127.0.0.1:{server.port}"
        with pytest.raises(urlsieve.Error, match=f"127.0.0.1:{server.port}") as raised:
            urlsieve.SeenFilter(redis=wrong, name="auth")
        assert "open-sesame" not in str(raised.value)
        assert not isinstance(raised.value, urlsieve.UnavailableError)  # retrying will not help
    finally:
        server.stop()


def test_a_killed_server_raises_never_answers_seen(redis_server):
    f = urlsieve.SeenFilter(redis=redis_server.url, name="killed", redis_front_cache_keys=0)
    assert f.insert_if_new("http://k.example/1") is True
    redis_server.kill()
    with pytest.raises(urlsieve.Error, match=f"127.0.0.1:{redis_server.port}"):
        f.insert_if_new("http://k.example/1")
    with pytest.raises(urlsieve.Error):
        f.insert_many(["http://k.example/2"])


def _has_keyword(name):
    """The revisit_after / deletable keywords and forget() come with the local parts (helpers gen
    and forget); these tests run once the module has them."""
    try:
        urlsieve.SeenFilter(**{name: 0 if name == "revisit_after" else False}).close()
        return hasattr(urlsieve.SeenFilter, "forget") or name == "revisit_after"
    except Exception:  # an unknown keyword, or the local set's "not built yet"
        return False


@pytest.mark.skipif(not _has_keyword("revisit_after"), reason="no revisit_after keyword yet")
def test_revisit_after_over_redis_makes_a_key_new_again(redis_server):
    import time
    # The server's TIME ages the generations: 2 s in 2 generations, polled with a deadline.
    f = urlsieve.SeenFilter(redis=redis_server.url, name="revisit", capacity=1000,
                            revisit_after=2, generations=2)
    assert f.insert_if_new("http://r.example/a") is True
    assert f.insert_if_new("http://r.example/a") is False
    deadline = time.monotonic() + 60
    while "http://r.example/a" in f and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "http://r.example/a" not in f, "still seen a minute after revisit_after = 2 s"
    assert f.insert_if_new("http://r.example/a") is True
    # Reopened asking for no time: the set keeps its own, with a notice.
    again = urlsieve.SeenFilter(redis=redis_server.url, name="revisit", capacity=1000)
    assert any("revisit_after" in n for n in again.notices)
    assert again.insert_if_new("http://r.example/a") is False


@pytest.mark.skipif(not _has_keyword("deletable"), reason="no deletable keyword / forget() yet")
def test_forget_over_redis_deletable_and_exact_and_a_plain_set_refuses(redis_server):
    for name, kwargs in (("deletable", dict(deletable=True)), ("exact", dict(exact=True))):
        a = urlsieve.SeenFilter(redis=redis_server.url, name=name, capacity=1000, **kwargs)
        b = urlsieve.SeenFilter(redis=redis_server.url, name=name, capacity=1000, **kwargs)
        assert a.insert_if_new("http://f.example/x") is True
        assert b.insert_if_new("http://f.example/x") is False  # b's front cache knows it now
        assert a.forget("http://F.example/x") is True          # canonicalized like an insert
        assert b.insert_if_new("http://f.example/x") is True   # b's cache heard of the forget
        assert a.forget("http://f.example/never") is False
    plain = urlsieve.SeenFilter(redis=redis_server.url, name="plain", capacity=1000)
    assert plain.insert_if_new("http://f.example/x") is True
    with pytest.raises(urlsieve.Error, match="--deletable"):
        plain.forget("http://f.example/x")
    assert plain.insert_if_new("http://f.example/x") is False


def test_the_password_comes_from_the_environment(tmp_path, monkeypatch):
    server = RedisServer(tmp_path / "redis", password="sesame")
    try:
        bare = f"redis://127.0.0.1:{server.port}"
        for variable in ("URLSIEVE_REDIS_PASSWORD", "REDISCLI_AUTH"):
            monkeypatch.setenv(variable, "sesame")
            with urlsieve.SeenFilter(redis=bare, name="env") as f:
                f.insert_if_new(f"http://{variable}.example/")
            monkeypatch.delenv(variable)
        with pytest.raises(urlsieve.Error, match=f"127.0.0.1:{server.port}"):
            urlsieve.SeenFilter(redis=bare, name="env")
    finally:
        server.stop()


def test_a_set_that_lost_data_raises_until_reopened_with_accept_loss(redis_server):
    import subprocess
    f = urlsieve.SeenFilter(redis=redis_server.url, name="lost", capacity=10_000)
    urls = [f"http://lost.example/{i}" for i in range(500)]
    assert all(f.insert_many(urls))
    key = "urlsieve:{lost:0}:bloom:0"
    port = redis_server.url.rsplit(":", 1)[1].split("/")[0]
    subprocess.run(["redis-cli", "-p", port, "DEL", key], check=True, capture_output=True)
    # (The front cache still answers the URLs this process inserted: those were seen.)
    with pytest.raises(urlsieve.Error, match=key) as raised:
        f.insert_many(urls + ["http://lost.example/new"])
    assert "accept_loss" in str(raised.value)
    with pytest.raises(urlsieve.Error, match=key):
        urlsieve.SeenFilter(redis=redis_server.url, name="lost", capacity=10_000)
    with pytest.raises(TypeError, match="accept_loss must be a bool"):
        urlsieve.SeenFilter(redis=redis_server.url, name="lost", accept_loss="yes")
    repaired = urlsieve.SeenFilter(redis=redis_server.url, name="lost", capacity=10_000,
                                   accept_loss=True)
    assert any(key in notice for notice in repaired.notices)
    assert all(repaired.insert_many(urls))  # the lost shard's URLs are new again
    # The refused batch wrote nothing; the first handle works again.
    assert f.insert_many(["http://lost.example/new"]) == [True]
    assert repaired.insert_many(["http://lost.example/new"]) == [False]


def _insert_in_worker(args):
    url, name, inherited, urls = args
    if inherited is not None:
        try:
            inherited.insert_many(urls)
            return "inherited filter answered"
        except urlsieve.Error as error:
            return "refused" if "fork()" in str(error) else str(error)
    with urlsieve.SeenFilter(redis=url, name=name, capacity=100_000) as own:
        return sum(own.insert_many(urls))


_INHERITED = None


def _use_inherited(urls):
    return _insert_in_worker((None, None, _INHERITED, urls))


def test_forked_workers_open_their_own_filter_and_an_inherited_one_raises(redis_server):
    # fork() after opening a Redis-backed filter shared its pooled connections: 10,450-10,800
    # "new" answers for 10,400 distinct URLs. Now an inherited filter refuses; each worker opens
    # its own and every URL is new exactly once.
    import multiprocessing
    global _INHERITED
    _INHERITED = urlsieve.SeenFilter(redis=redis_server.url, name="forked", capacity=100_000)
    assert _INHERITED.insert_if_new("http://forked.example/parent")
    context = multiprocessing.get_context("fork")
    urls = [f"http://forked.example/{i % 10_400}" for i in range(20_800)]
    chunks = [urls[i:i + 1300] for i in range(0, len(urls), 1300)]
    with context.Pool(4) as pool:
        assert set(pool.map(_use_inherited, chunks[:4])) == {"refused"}
        counts = pool.map(_insert_in_worker,
                          [(redis_server.url, "forked", None, chunk) for chunk in chunks])
    assert sum(counts) == 10_400
    assert _INHERITED.insert_if_new("http://forked.example/parent") is False  # the parent's works
    _INHERITED.close()
