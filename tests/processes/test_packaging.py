"""The built wheel ships the code, the schemas and the ledger SQL, and finds them once installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import guardrails
from guardrails._package_data import data_path
from tests._paths import REPO

#: slow: builds the sdist and the wheel, and runs Python on the installed copy
#: timeout: includes building the wheel, in the first test's setup
pytestmark = [pytest.mark.slow, pytest.mark.timeout(30)]

DIST_INFO = f"hookrails-{guardrails.__version__}.dist-info"
#: what a developer's checkout holds that a build must not see
NOT_SOURCES = shutil.ignore_patterns(
    ".git",
    ".venv",
    "__pycache__",
    "*.pyc",
    ".*_cache",
    ".hypothesis",
    ".hookrails",
    "build",
    "dist",
    "*.egg-info",
    "*.db*",
)


def run_python(*args: str, cwd: Path, pythonpath: Path | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    proc = subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build from a copy of the sources (the repo gets no build artifacts): the sdist,
    then the wheel from the sdist, as ``pip install hookrails`` from an sdist would."""
    tmp = tmp_path_factory.mktemp("build")
    src = tmp / "src"
    shutil.copytree(REPO, src, ignore=NOT_SOURCES)
    out = tmp / "dist"
    run_python("-m", "build", "--no-isolation", "--outdir", str(out), cwd=src)
    return out


@pytest.fixture(scope="module")
def wheel(dist: Path) -> Path:
    (built,) = dist.glob("hookrails-*-py3-none-any.whl")
    return built


@pytest.fixture(scope="module")
def sdist_names(dist: Path) -> set[str]:
    (built,) = dist.glob("hookrails-*.tar.gz")
    with tarfile.open(built) as tf:
        return {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}


@pytest.fixture(scope="module")
def names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as zf:
        return set(zf.namelist())


@pytest.fixture(scope="module")
def unzipped(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel as pip would lay it out in site-packages."""
    site = tmp_path_factory.mktemp("site-packages")
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    return site


def repo_files(folder: str) -> list[str]:
    root = REPO / folder
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )


# --- what the wheel holds ---------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "guardrails/__init__.py",
        "guardrails/py.typed",
        "guardrails/_data/schemas/hooks/PreToolUse.input.json",
        "guardrails/_data/schemas/hooks/hook-output.json",
        "guardrails/_data/schemas/agent-definition.schema.json",
        "guardrails/ledger/sql/migrations/0001_initial.sql",
        "guardrails/ledger/sql/schema.sql",
    ],
)
def test_wheel_contains(names: set[str], name: str) -> None:
    assert name in names


def test_wheel_ships_every_schema(names: set[str]) -> None:
    missing = [f for f in repo_files("schemas") if f"guardrails/_data/schemas/{f}" not in names]
    assert missing == []


def test_wheel_ships_the_ledger_sql(names: set[str]) -> None:
    sql = [f"guardrails/ledger/sql/{f}" for f in repo_files("guardrails/ledger/sql")]
    assert sql and [f for f in sql if f not in names] == []


def test_wheel_ships_every_module(names: set[str]) -> None:
    modules = [f"guardrails/{f}" for f in repo_files("guardrails") if f.endswith(".py")]
    assert "guardrails/ledger/sqlite.py" in modules
    assert [m for m in modules if m not in names] == []


def test_wheel_holds_only_the_package_and_its_metadata(names: set[str]) -> None:
    stray = sorted(n for n in names if not n.startswith(("guardrails/", f"{DIST_INFO}/")))
    assert stray == []


def test_wheel_declares_the_hookrails_console_script(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        entry_points = zf.read(f"{DIST_INFO}/entry_points.txt").decode()
    assert "[console_scripts]" in entry_points
    assert "hookrails = guardrails.cli.entry:main" in entry_points.splitlines()


def test_wheel_version_is_the_package_version(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        metadata = zf.read(f"{DIST_INFO}/METADATA").decode().splitlines()
    assert f"Version: {guardrails.__version__}" in metadata
    assert "Name: hookrails" in metadata


@pytest.mark.parametrize("folder", ["schemas", "guardrails/ledger/sql"])
def test_sdist_ships_every_data_file(sdist_names: set[str], folder: str) -> None:
    assert [f for f in repo_files(folder) if f"{folder}/{f}" not in sdist_names] == []


# --- installed from the wheel ----------------------------------------------------------

PRINT_LOCATIONS = (
    "import guardrails, guardrails._package_data as r, guardrails.ledger.migrations as s; "
    "print(guardrails.__file__); print(r.data_path('schemas')); print(s.SQL_DIR)"
)


def test_installed_wheel_finds_its_data_inside_the_package(unzipped: Path, tmp_path: Path) -> None:
    out = run_python("-c", PRINT_LOCATIONS, cwd=tmp_path, pythonpath=unzipped).splitlines()
    package, schemas, ledger = (Path(line).resolve() for line in out)
    assert package.is_relative_to(unzipped.resolve() / "guardrails")
    assert schemas == unzipped.resolve() / "guardrails" / "_data" / "schemas"
    assert ledger == unzipped.resolve() / "guardrails" / "ledger" / "sql"
    assert (ledger / "migrations" / "0001_initial.sql").is_file()
    assert (schemas / "hooks" / "PreToolUse.input.json").is_file()


def test_installed_wheel_ignores_a_foreign_schemas_folder(unzipped: Path, tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    shutil.copytree(unzipped, site)
    shutil.rmtree(site / "guardrails" / "_data")  # a broken install...
    (site / "schemas").mkdir()  # ...next to another project's top-level folder
    script = "import guardrails._package_data as r; r.data_path('schemas')"
    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0
    assert "FileNotFoundError: hookrails data folder 'schemas' is missing" in proc.stderr


def test_installed_wheel_runs_python_dash_m_guardrails(unzipped: Path, tmp_path: Path) -> None:
    out = run_python("-m", "guardrails", "--help", cwd=tmp_path, pythonpath=unzipped)
    assert "Usage: hookrails" in out and "check" in out and "explain" in out


# --- editable install / checkout -------------------------------------------------------


def test_checkout_imports_the_repo_package() -> None:
    assert Path(guardrails.__file__).resolve().parent == REPO / "guardrails"


def test_checkout_reads_schemas_from_the_repo_root() -> None:
    assert data_path("schemas") == REPO / "schemas"


def test_missing_data_folder_raises_file_not_found() -> None:
    with pytest.raises(FileNotFoundError, match="'nope' is missing"):
        data_path("nope")


def test_python_dash_m_guardrails_help() -> None:
    out = run_python("-m", "guardrails", "--help", cwd=REPO)
    assert out.startswith("Usage: hookrails")
