"""SeenFilter.forget (docs/features/forgetting.md, "Forgetting"): deletable=True forgets, durably; a
plain Bloom filter refuses, naming the options that would allow it."""

import pytest

import urlsieve


def test_a_plain_filter_refuses_and_names_the_options():
    seen = urlsieve.SeenFilter(capacity=1000)
    assert seen.insert_if_new("http://a.example/") is True
    with pytest.raises(urlsieve.Error, match=r"--exact.*--deletable"):
        seen.forget("http://a.example/")
    assert "http://a.example/" in seen


def test_deletable_forgets_and_the_url_is_new_again():
    seen = urlsieve.SeenFilter(capacity=1000, deletable=True)
    assert seen.insert_if_new("http://a.example/x") is True
    assert seen.forget("HTTP://A.example:80/x#top") is True  # canonicalized as an insert
    assert "http://a.example/x" not in seen
    assert seen.insert_if_new("http://a.example/x") is True
    assert seen.forget(b"http://never.example/") is False
    with pytest.raises(ValueError):
        seen.forget("ftp://a.example/")
    with pytest.raises(TypeError):
        urlsieve.SeenFilter(capacity=1000, deletable="yes")


def test_forgetting_is_durable_and_deletable_is_stored(tmp_path):
    state = str(tmp_path / "state")
    with urlsieve.SeenFilter(capacity=1000, state_dir=state, deletable=True) as seen:
        assert seen.insert_many(["http://d.example/1", "http://d.example/2"]) == [True, True]
        seen.save()
        assert seen.forget("http://d.example/1") is True
    # Reopened without deletable=True: the state keeps its counting filter.
    with urlsieve.SeenFilter(state_dir=state) as seen:
        assert "http://d.example/2" in seen
        assert seen.insert_if_new("http://d.example/1") is True
        assert seen.forget("http://d.example/2") is True
