"""A real redis-server for a test: 127.0.0.1, a free port, its files in the test's directory.

    server = RedisServer(tmp_path / "redis", password="pw")   # started; PING answered
    server.url                                             # "redis://:pw@127.0.0.1:PORT"
    server.kill(); server.restart()                        # same port and files
    server.stop()

Readiness is polled (PING) up to a deadline; a server that exits at start (its port taken between
the probe and its bind) is started again on another port.
"""

import os
import signal
import socket
import subprocess
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers_ping(port, password=None, timeout=1.0):
    """True when the server on `port` answers PING (after AUTH when a password is given)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            request = (f"AUTH {password}\r\n" if password else "") + "PING\r\n"
            s.sendall(request.encode())
            reply = b""
            while b"+PONG\r\n" not in reply and b"-" not in reply:
                chunk = s.recv(256)
                if not chunk:
                    break
                reply += chunk
            return b"+PONG\r\n" in reply
    except OSError:
        return False


class RedisServer:
    def __init__(self, directory, password=None, append_only=False):
        self.dir = str(directory)
        self.password = password
        self.append_only = append_only
        self.process = None
        os.makedirs(self.dir, exist_ok=True)
        for _ in range(8):
            self.port = free_port()
            if self._launch():
                return
        raise RuntimeError(f"could not start redis-server in {self.dir} "
                           "(scripts/setup.sh installs it)")

    @property
    def url(self):
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}"

    def _launch(self):
        args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
                "--save", "", "--daemonize", "no", "--protected-mode", "no",
                "--logfile", os.path.join(self.dir, "redis.log")]
        if self.append_only:
            args += ["--appendonly", "yes", "--appendfsync", "always"]
        if self.password:
            args += ["--requirepass", self.password]
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:  # exited: the port was taken
                self.process = None
                return False
            if answers_ping(self.port, self.password):
                return True
            time.sleep(0.01)  # polling for readiness, up to the deadline
        self.kill()
        return False

    def kill(self):
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
            self.process = None

    def restart(self):
        """Kills it and starts it again on the same port with the same files."""
        self.kill()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self._launch():
                return
        raise RuntimeError(f"redis-server did not restart on port {self.port}")

    stop = kill
