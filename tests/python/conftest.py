"""Fixtures shared by the Python tests."""

import pytest

from redis_server import RedisServer


@pytest.fixture
def redis_server(tmp_path):
    """A real redis-server on a free loopback port, killed when the test ends."""
    server = RedisServer(tmp_path / "redis")
    yield server
    server.stop()
