"""A throwaway project to judge commands in, and to prove that protected-path cases really write.

:func:`make_sandbox` lays out a small project (secrets, keys, a real ``.git``,
``sub/``, files to copy from, archives and patches whose members are protected
names) with a home and a temp folder of its own beside it. :func:`run_case`
executes ONE ``protected_write`` case there with ``bash`` and reports which files
changed. Only that category is ever executed, and only after :func:`refusal`
found nothing that could reach outside the sandbox: no absolute path but
``@ROOT@/...`` (and a few read-only system paths), no climbing above the project,
no network client, no privilege or process tool. The run has a timeout, no
standard input, ``HOME`` and ``TMPDIR`` inside the sandbox, the normal ``PATH``,
and no network where ``unshare -rn`` works.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .cases import Evasion

__all__ = [
    "PROJECT",
    "RunResult",
    "make_sandbox",
    "refusal",
    "render",
    "run_case",
    "sandbox",
    "snapshot",
]

#: the project folder's name inside the sandbox (delete cases name it: ``rm -rf ../project``)
PROJECT = "project"
_TIMEOUT = 20.0
_SECRET = "API_KEY=secret\nDB_PASSWORD=secret\n"
_PAYLOAD = "PWNED=1\n"

_FILES: dict[str, str] = {
    ".env": _SECRET,
    ".env.local": "LOCAL_KEY=secret\n",
    ".env.production": "PROD_KEY=secret\n",
    ".env.example": "API_KEY=\n",
    "id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\nKEY secret\n-----END KEY-----\n",
    "id_rsa.pub": "ssh-ed25519 AAAA fake\n",
    "keys/server.pem": "-----BEGIN PRIVATE KEY-----\nKEY secret\n-----END PRIVATE KEY-----\n",
    "sub/.env": "SUB_KEY=secret\n",
    "sub/notes.txt": "sub notes\n",
    "sub/deep/.keep": "",
    "src/app.py": "print('hello')\n",
    "README.md": "# demo project\n",
    "notes.txt": "replacement line\nanother line\n",
    "notes.json": '{"a": 1}\n',
    "payload/.env": _PAYLOAD,
    "payload/id_rsa": _PAYLOAD,
    "payload/server.pem": _PAYLOAD,
    "env.patch": "--- .env\n+++ .env\n@@ -1,2 +1,2 @@\n-API_KEY=secret\n+API_KEY=pwned\n"
    " DB_PASSWORD=secret\n",
    "env.diff": "diff --git a/.env b/.env\n--- a/.env\n+++ b/.env\n@@ -1,2 +1,2 @@\n"
    "-API_KEY=secret\n+API_KEY=pwned\n DB_PASSWORD=secret\n",
}
_GIT_CONFIG_PAYLOAD = "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = id\n"

#: absolute paths a case may name without leaving the sandbox (read-only, or a sink)
_ALLOWED_ABSOLUTE = re.compile(r"/(?:bin|usr/bin)/[\w.+-]+|/dev/(?:null|stdin|stdout|stderr)")
_ABSOLUTE = re.compile(r"(?:^|(?<=[\s'\"=<>|&;(`{,:@]))/[^\s'\";|&)<>]*")
_FORBIDDEN_WORDS = re.compile(
    r"(?<![\w./-])(?:sudo|su|doas|pkexec|chroot|mount|umount|kill|pkill|killall|reboot|shutdown|"
    r"ssh|scp|sftp|rsync|nc|ncat|socat|telnet|wget|ftp|tftp|dig|nslookup|host|ping|"
    r"systemctl|crontab|at|batch|chown|chmod\s+-R|dd\s+[^|;&]*of=/)(?![\w-])"
)


def render(command: str, root: str, home: str | None = None) -> str:
    """``command`` with ``@ROOT@`` and ``@HOME@`` replaced."""
    return command.replace("@ROOT@", root).replace("@HOME@", home or os.path.expanduser("~"))


def refusal(case: Evasion) -> str | None:
    """Why ``case`` must not be executed, or ``None`` when it may run in the sandbox."""
    if case.category != "protected_write":
        return f"only protected_write cases are executed, not {case.category}"
    text = case.command
    rest = re.sub(r"(?:file://)?@ROOT@(?:/[^\s'\";|&)<>]*)?", "@ROOT@", text)
    for m in _ABSOLUTE.finditer(rest):
        if not _ALLOWED_ABSOLUTE.fullmatch(m.group()):
            return f"absolute path outside the sandbox: {m.group()!r}"
    if "../.." in text and not case.cwd and "cd " not in text:
        return "climbs above the project"
    if re.search(r"(?:\.\./){3}", text):
        return "climbs above the project"
    if re.search(r"\bcurl\b", text) and not re.search(r"\bcurl\b[^|;&]*\bfile://@ROOT@/", text):
        return "network client"
    if re.search(r"https?://|\bgit\s+(?:push|fetch|pull|clone)\b", text):
        return "network access"
    found = _FORBIDDEN_WORDS.search(text)
    if found:
        return f"forbidden program {found.group().split()[0]!r}"
    if re.search(r"\b(?:mv|cp|ln|install|tee)\b[^;&|]*\s/dev/\S+\s*(?:$|[;&|])", text):
        return "replaces a device file"
    return None


def _git(root: Path, *args: str) -> None:
    env = {
        **_base_env(root.parent / "home", root.parent / "tmp"),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    subprocess.run(
        ["git", *args], cwd=root, env=env, check=True, capture_output=True, timeout=_TIMEOUT
    )


def _tar(path: Path, members: dict[str, str], gz: bool = False) -> None:
    with tarfile.open(path, "w:gz" if gz else "w") as tar:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))


def _zip(path: Path, members: dict[str, str]) -> None:
    with zipfile.ZipFile(path, "w") as z:
        for name, text in members.items():
            z.writestr(name, text)


def make_sandbox(base: Path) -> Path:
    """Lay out the sandbox under ``base`` (an empty folder); returns the project root."""
    root = base / PROJECT
    for name in ("home", "tmp"):
        (base / name).mkdir()
    root.mkdir()
    for name, text in _FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    _tar(root / "payload.tar", {".env": _PAYLOAD})
    _tar(root / "payload.tgz", {".env": _PAYLOAD}, gz=True)
    _tar(root / "payload-git.tar", {".git/config": _GIT_CONFIG_PAYLOAD})
    _tar(root / "keys.tar", {"keys/server.pem": _PAYLOAD})
    _zip(root / "payload.zip", {".env": _PAYLOAD})
    _zip(root / "payload-key.zip", {"id_rsa": _PAYLOAD})
    if shutil.which("git"):
        _git(root, "init", "-q")
        _git(root, "add", "README.md", "src/app.py")
        _git(root, "commit", "-qm", "init")
    else:  # the shape of a repository, for the guards; git cases are skipped
        (root / ".git" / "hooks").mkdir(parents=True)
        (root / ".git" / "info").mkdir()
        (root / ".git" / "config").write_text("[core]\n\tbare = false\n", encoding="utf-8")
        (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
        (root / ".git" / "info" / "exclude").write_text("", encoding="utf-8")
    return root


@contextmanager
def sandbox() -> Iterator[Path]:
    """A fresh sandbox project, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="hookrails-redteam-") as tmp:
        yield make_sandbox(Path(tmp))


def snapshot(root: Path) -> dict[str, tuple[str, str]]:
    """Every path under ``root`` -> (kind, content hash or link target); links not followed."""
    out: dict[str, tuple[str, str]] = {}
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            if os.path.islink(path):
                out[rel] = ("link", os.readlink(path))
            elif os.path.isdir(path):
                out[rel] = ("dir", "")
            else:
                with open(path, "rb") as f:
                    out[rel] = ("file", hashlib.sha256(f.read()).hexdigest())
    return out


def _base_env(home: Path, tmp: Path) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
    }
    for name in ("PYENV_ROOT", "PYENV_VERSION"):  # python3 through a pyenv shim
        if name in os.environ:
            env[name] = os.environ[name]
    return env


_UNSHARE: list[bool] = []


def _isolation() -> list[str]:
    """``unshare -rn`` (no network) when this machine allows it, else nothing."""
    if not _UNSHARE:
        ok = False
        if shutil.which("unshare"):
            try:
                ok = (
                    subprocess.run(
                        ["unshare", "-rn", "true"], capture_output=True, timeout=_TIMEOUT
                    ).returncode
                    == 0
                )
            except (OSError, subprocess.SubprocessError):
                ok = False
        _UNSHARE.append(ok)
    return ["unshare", "-rn"] if _UNSHARE[0] else []


@dataclass(frozen=True)
class RunResult:
    """What running a case did: exit status, output tail, the paths that changed."""

    returncode: int | None
    output: str
    changed: tuple[str, ...]
    wrote_target: bool
    skipped: str | None = None


def missing_programs(case: Evasion) -> list[str]:
    """The programs ``case`` needs that this machine does not have."""
    return [p for p in case.needs if shutil.which(p) is None]


def run_case(case: Evasion) -> RunResult:
    """Execute one protected-path case in a fresh sandbox; did its target change?"""
    why = refusal(case)
    if why is not None:
        raise ValueError(f"{case.id}: refusing to execute: {why}")
    missing = missing_programs(case)
    if missing:
        return RunResult(None, "", (), False, skipped=f"needs {', '.join(missing)}")
    with sandbox() as root:
        before = snapshot(root)
        cwd = root / case.cwd if case.cwd else root
        command = render(case.command, str(root), str(root.parent / "home"))
        try:
            proc = subprocess.run(
                [*_isolation(), "bash", "-c", command],
                cwd=cwd,
                env=_base_env(root.parent / "home", root.parent / "tmp"),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=_TIMEOUT,
            )
            code: int | None = proc.returncode
            output = (proc.stdout + proc.stderr)[-500:]
        except subprocess.TimeoutExpired:
            code, output = None, "timed out"
        after = snapshot(root)
        changed = tuple(
            sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
        )
        target = case.target
        wrote = any(p == target or p.startswith(target + "/") for p in changed)
        return RunResult(code, output, changed, wrote)
