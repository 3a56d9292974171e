"""A throwaway PostgreSQL cluster for the tests, from the server binaries on the machine.

:func:`start` runs ``initdb`` into a temporary folder (through ``runuser -u postgres``
when the tests run as root: ``initdb`` refuses root), then a postmaster on a unix
socket in that folder and on 127.0.0.1 at a free port, with ``fsync=off`` (this
cluster only: its data is thrown away). :meth:`Cluster.stop` stops it and removes the
folder; an ``atexit`` hook kills the postmaster if the interpreter ends first.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

#: what to install when no server binaries are found (Debian/Ubuntu package)
PACKAGE = "postgresql"
MIN_VERSION = 15


def binaries() -> str | None:
    """The ``bin`` folder of the newest PostgreSQL >= 15 on this machine, or None."""
    found = []
    for folder in glob.glob("/usr/lib/postgresql/*/bin"):
        version = os.path.basename(os.path.dirname(folder))
        usable = os.access(os.path.join(folder, "initdb"), os.X_OK)
        if version.isdigit() and int(version) >= MIN_VERSION and usable:
            found.append((int(version), folder))
    return max(found)[1] if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    folder: str
    port: int
    process: subprocess.Popen[bytes]
    bindir: str
    user: str
    _stopped: bool = field(default=False)

    @property
    def socket_dir(self) -> str:
        return os.path.join(self.folder, "sock")

    def url(self, database: str = "postgres") -> str:
        """A URL on 127.0.0.1 (what a fleet's machines would use)."""
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def create_schema(self, name: str) -> str:
        """A URL whose user ``name`` owns schema ``name`` and finds it first on its search
        path: a fresh, empty ledger in milliseconds (a new database copies a template)."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE ROLE "{name}" LOGIN')
            conn.execute(f'CREATE SCHEMA "{name}" AUTHORIZATION "{name}"')
            conn.execute(f'ALTER ROLE "{name}" SET search_path = "{name}"')
        return f"postgresql://{name}@127.0.0.1:{self.port}/postgres"

    def stop(self) -> None:
        """Stop the postmaster (fast shutdown, then a kill) and remove the folder."""
        if self._stopped:
            return
        self._stopped = True
        if self.process.poll() is None:
            self._signal(signal.SIGINT)  # fast shutdown
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.process.wait(timeout=10)
        shutil.rmtree(self.folder, ignore_errors=True)

    def _signal(self, sig: int) -> None:
        """Signal the postmaster itself (``runuser`` does not pass signals on), else its
        process group."""
        try:
            with open(os.path.join(self.folder, "data", "postmaster.pid")) as fh:
                pid = int(fh.readline())
            os.kill(pid, sig)
        except (OSError, ValueError):
            with contextlib.suppress(OSError):
                os.killpg(self.process.pid, sig)
        if sig == signal.SIGKILL:
            with contextlib.suppress(OSError):
                os.killpg(self.process.pid, sig)

    def pause(self) -> None:
        """Stop the server, keeping its data (a test of an outage); :meth:`resume` restarts."""
        self._signal(signal.SIGINT)
        self.process.wait(timeout=20)

    def resume(self) -> None:
        self.process = _postmaster(self.bindir, self.folder, self.port)
        _wait_ready(self)


def _as_postgres(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


def _postmaster(bindir: str, folder: str, port: int) -> subprocess.Popen[bytes]:
    cmd = [
        os.path.join(bindir, "postgres"),
        "-D", os.path.join(folder, "data"),
        "-p", str(port),
        "-k", os.path.join(folder, "sock"),
        "-c", "listen_addresses=127.0.0.1",
        "-c", "fsync=off",
        "-c", "synchronous_commit=off",
        "-c", "full_page_writes=off",
        "-c", "max_connections=100",
        "-c", "shared_buffers=32MB",
    ]  # fmt: skip
    log = open(os.path.join(folder, "server.log"), "ab")  # noqa: SIM115  # the child keeps it
    try:
        return subprocess.Popen(
            _as_postgres(cmd), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    finally:
        log.close()


def _wait_ready(cluster: Cluster) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if cluster.process.poll() is not None:
            raise RuntimeError(f"postgres exited: {_log_tail(cluster.folder)}")
        with (
            contextlib.suppress(OSError),
            socket.create_connection(("127.0.0.1", cluster.port), timeout=1),
        ):
            ok = subprocess.run(
                [os.path.join(cluster.bindir, "pg_isready"), "-h", "127.0.0.1",
                 "-p", str(cluster.port), "-U", cluster.user],
                capture_output=True, check=False,
            )  # fmt: skip
            if ok.returncode == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"postgres did not start: {_log_tail(cluster.folder)}")


def _log_tail(folder: str) -> str:
    try:
        with open(os.path.join(folder, "server.log"), encoding="utf-8", errors="replace") as fh:
            return fh.read()[-2000:]
    except OSError as exc:
        return str(exc)


def start() -> Cluster:
    """initdb and start a cluster; raises RuntimeError (with the server log) on failure."""
    bindir = binaries()
    if bindir is None:
        raise RuntimeError(f"no PostgreSQL >= {MIN_VERSION} server binaries")
    folder = tempfile.mkdtemp(prefix="hookrails-pg-")
    os.chmod(folder, 0o755)
    os.makedirs(os.path.join(folder, "sock"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
        shutil.chown(os.path.join(folder, "sock"), "postgres", "postgres")
    user = "postgres" if os.geteuid() == 0 else os.environ.get("USER") or "postgres"
    init = subprocess.run(
        _as_postgres(
            [os.path.join(bindir, "initdb"), "-D", os.path.join(folder, "data"), "-U", user,
             "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"]
        ),
        capture_output=True, check=False,
    )  # fmt: skip
    if init.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {init.stderr.decode(errors='replace')[-2000:]}")
    port = _free_port()
    cluster = Cluster(folder, port, _postmaster(bindir, folder, port), bindir, user)
    atexit.register(cluster.stop)  # the interpreter ends before the fixture's finalizer
    try:
        _wait_ready(cluster)
    except BaseException:
        cluster.stop()
        raise
    return cluster
