"""``protect_paths`` on a folder deleted or moved with what it holds: at any depth, far above
the project, and past what the guard can look through.

Each denied case is also executed with ``bash`` in its own throwaway tree, to prove the
command really removes the protected file the guard stands for: a deny that guards
nothing would pass the first half alone. Every command stays inside ``tmp_path``: the
project is three folders down and no case climbs more than two.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from guardrails.builtins import ProtectPaths, path_scan, protect_paths
from tests._guards import build_guard


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """``tmp_path/work/team/project``: a repo, a secret at its top and one four levels down,
    code, a folder of a hundred files that holds no secret, and a link to the deep secret's
    folder."""
    root = tmp_path / "work" / "team" / "project"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (root / ".env").write_text("TOKEN=x\n", encoding="utf-8")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print(1)\n", encoding="utf-8")
    deep = root / "services" / "api" / "config"
    deep.mkdir(parents=True)
    (deep / ".env").write_text("DB=x\n", encoding="utf-8")
    lib = root / "assets" / "img" / "lib"
    lib.mkdir(parents=True)
    for i in range(100):
        (lib / f"m{i}.png").write_text("", encoding="utf-8")
    (root / "cfg").symlink_to(deep)
    return root


def decide(project: Path, command: str, hook: object = protect_paths) -> tuple[str, str]:
    guard = build_guard([hook], cwd=project, ledger=False)
    command = command.replace("@TOP@", str(project.parents[2]))
    d = guard.sync.pre_tool_use("Bash", {"command": command})
    return d.decision, d.reason or ""


#: (id, command run in the project, a protected file it removes, relative to the project)
REMOVES = [
    ("grandparent-named", "rm -rf ../../../work", ".git/config"),
    ("grandparent-absolute", "rm -rf @TOP@/work", ".git/config"),
    ("grandparent-pwd", "rm -rf ~+/../../../work/", ".env"),
    ("grandparent-star", "cd ../.. && rm -rf *", ".git/config"),
    ("grandparent-star-slash", "cd ../../ ; rm -r -f -- ./*", ".env"),
    ("grandparent-moved", "mv ../../../work @TOP@/elsewhere", ".env"),
    ("parent-moved", "mv ../../team @TOP@/elsewhere", ".git/config"),
    ("four-levels-down", "rm -rf services", "services/api/config/.env"),
    ("four-levels-down-moved", "mv services @TOP@/gone", "services/api/config/.env"),
    ("three-levels-down", "rm -rf services/api", "services/api/config/.env"),
    # a link written with a trailing slash: rm and find empty the folder it leads to
    ("link-slash", "rm -rf cfg/", "services/api/config/.env"),
    ("link-slash-find", "find cfg/ -delete", "services/api/config/.env"),
    # `..` after a link goes up from where the link leads, not from the link's folder
    ("dotdot-after-link", "rm -rf cfg/../../api", "services/api/config/.env"),
    ("cd-link-then-dotdot", "cd cfg && rm -rf ../../api", "services/api/config/.env"),
    # folders a listing names, taken whole
    (
        "find-name-rm",
        "find . -maxdepth 1 -name 'serv*' -exec rm -rf {} +",
        "services/api/config/.env",
    ),
    ("find-prune-rm", "find . -name api -prune -exec rm -rf {} \\;", "services/api/config/.env"),
    (
        "find-name-mv",
        "find . -maxdepth 1 -name services -exec mv {} @TOP@/x \\;",
        "services/api/config/.env",
    ),
    # a rename in inline code moves the folder away
    (
        "python-rename",
        'python3 -c \'import os; os.rename("services", "gone")\'',
        "services/api/config/.env",
    ),
    (
        "python-path-rename",
        'python3 -c \'import pathlib; pathlib.Path("services").rename("gone")\'',
        "services/api/config/.env",
    ),
    (
        "python-shutil-move",
        'python3 -c \'import shutil; shutil.move("services", "gone")\'',
        "services/api/config/.env",
    ),
    ("perl-rename", 'perl -e \'rename "services", "gone"\'', "services/api/config/.env"),
    # a folder in a place the guard cannot know: the worst case
    ("pwd-prefix", 'rm -rf "$PWD/services"', "services/api/config/.env"),
    ("pwd-command", 'rm -rf "$(pwd)/services"', "services/api/config/.env"),
    ("pwd-kept-then-cd", 'x="$PWD"; cd src; rm -rf "$x/services"', "services/api/config/.env"),
    ("pwd-after-cd", 'cd src && rm -rf "$PWD/../services"', "services/api/config/.env"),
    ("previous-dir", "cd src && rm -rf ~-/services", "services/api/config/.env"),
    ("cd-unknown", 'cd "$PWD/services" && rm -rf api', "services/api/config/.env"),
    ("cdpath", "cd src && CDPATH=.. cd services && rm -rf api", "services/api/config/.env"),
    ("slash-pwd", "rm -rf /$PWD/services", "services/api/config/.env"),
    ("slash-pwd-command", 'rm -rf /"$(pwd)"/services', "services/api/config/.env"),
    (
        "tar-C-then-pwd",
        'tar -C src -cf @TOP@/x.tar --remove-files "$PWD/services"',
        "services/api/config/.env",
    ),
    # a `cd` that fails leaves the line where it was; `cd -P` goes up from the link's target
    ("failed-cd", "cd nowhere; rm -rf services", "services/api/config/.env"),
    ("cd-two-folders", "cd src assets; rm -rf services", "services/api/config/.env"),
    ("cd-physical", 'cd -P cfg/.. && rm -rf "$PWD/config"', "services/api/config/.env"),
    ("cd-in-background", "cd src & wait; rm -rf services", "services/api/config/.env"),
    ("cd-in-eval", "cd src; eval cd ..; rm -rf services", "services/api/config/.env"),
    # find listing its own start points
    (
        "find-star-start",
        "find * -maxdepth 0 -name 'serv*' -exec rm -rf {} +",
        "services/api/config/.env",
    ),
    # find following a link, ls listing folders for xargs
    ("find-follows-link", "find -L cfg -delete", "services/api/config/.env"),
    ("ls-listing-xargs", "ls -d serv* | xargs rm -rf", "services/api/config/.env"),
    # where a link leads, as realpath and readlink -f print it
    ("realpath-link", 'rm -rf "$(realpath cfg)"', "services/api/config/.env"),
    ("readlink-f-link", 'mv "$(readlink -f cfg)" @TOP@/c', "services/api/config/.env"),
    # listings of several folders, value options, any case
    ("ls-two-folders", "ls -d src services | xargs rm -rf", "services/api/config/.env"),
    ("find-two-starts", "find src services -maxdepth 0 | xargs rm -rf", "services/api/config/.env"),
    ("ls-ignore", "ls -I src | xargs rm -rf", "services/api/config/.env"),
    (
        "find-iname",
        "find . -maxdepth 1 -iname SERVICES -exec rm -rf {} +",
        "services/api/config/.env",
    ),
    ("extglob", "shopt -s extglob\nrm -rf !(src)", "services/api/config/.env"),
    # inline code under other names, or walking the folder
    (
        "python-import-as",
        'python3 -c \'from shutil import move as m; m("services", "gone")\'',
        "services/api/config/.env",
    ),
    (
        "python-module-as",
        'python3 -c \'import subprocess as s; s.call(["mv", "services", "x"])\'',
        "services/api/config/.env",
    ),
    (
        "python-path-walk",
        'python3 -c \'import pathlib; [p.unlink() for p in pathlib.Path("services").rglob("*") '
        "if p.is_file()]'",
        "services/api/config/.env",
    ),
    (
        "node-fs-promises",
        'node -e \'require("fs/promises").rm("services", {recursive: true})\'',
        "services/api/config/.env",
    ),
    (
        "perl-file-copy-mv",
        "perl -MFile::Copy=mv -e 'mv q{services}, q{gone}'",
        "services/api/config/.env",
    ),
    # programs that take a folder away while doing something else
    ("zip-move", "zip -rmq @TOP@/a.zip services", "services/api/config/.env"),
    ("gio-move", "gio move services @TOP@/s", "services/api/config/.env"),
    (
        "tar-remove-from-folder",
        "tar -C services -cf @TOP@/a.tar --remove-files api",
        "services/api/config/.env",
    ),
    (
        "tar-remove-listed",
        "tar -cf @TOP@/a.tar --remove-files -T <(echo services)",
        "services/api/config/.env",
    ),
    ("cmake-remove", "cmake -E remove_directory services", "services/api/config/.env"),
    ("tar-remove-abbreviated", "tar --remove -cf @TOP@/a.tar services", "services/api/config/.env"),
    (
        "tar-C-chain",
        "tar -cf @TOP@/x.tar --remove-files -C services -C api config",
        "services/api/config/.env",
    ),
    ("zip-recursing-a-link", "zip -rmq @TOP@/x.zip cfg", "services/api/config/.env"),
    (
        "gio-file-uri",
        "gio trash file://@TOP@/work/team/project/services",
        "services/api/config/.env",
    ),
    ("cmake-env", "cmake -E env X=1 rm -rf services", "services/api/config/.env"),
    ("cmake-chdir", "cmake -E chdir services rm -rf api", "services/api/config/.env"),
    (
        "zip-move-names-on-input",
        "echo services/api/config/.env | zip -qm @TOP@/a.zip -@",
        "services/api/config/.env",
    ),
    (
        "tar-names-before-C",
        "touch @TOP@/x; tar -cf @TOP@/a.tar --remove-files services -C @TOP@ x",
        "services/api/config/.env",
    ),
]

#: the same folders spelled ending in ``..``: GNU and BSD ``rm`` refuse such an operand and
#: ``mv`` fails on it, but what the line asks for is the same, and other builds need not refuse
ENDS_IN_DOTDOT = [
    "rm -rf ../..",
    "rm -rf ../../",
    "rm -r -f -- ../..",
    "rm -rf ~+/../..",
    "mv .. x",
]


@pytest.mark.parametrize("command", ENDS_IN_DOTDOT)
def test_a_folder_above_the_project_spelled_with_dotdot_is_denied(
    project: Path, command: str
) -> None:
    decision, reason = decide(project, command)
    assert decision == "deny" and "protected path" in reason, reason


def _case(name: str, command: str, removed: str) -> Any:
    # zip, gio, cmake, node may be missing; bash, coreutils, python3, perl are everywhere
    absent = [p for p in ("zip", "gio", "cmake", "node") if p in command.split()]
    absent = [p for p in absent if shutil.which(p) is None]
    missing = pytest.mark.skipif(bool(absent), reason=f"no {' '.join(absent)} here")
    return pytest.param(command, removed, id=name, marks=missing)


@pytest.mark.parametrize(("command", "removed"), [_case(*case) for case in REMOVES])
def test_a_folder_holding_a_protected_path_at_any_depth_is_denied(
    project: Path, command: str, removed: str
) -> None:
    decision, reason = decide(project, command)
    assert decision == "deny", reason
    assert "protected path" in reason
    # the proof: run it, and the protected file is gone from where it was
    assert (project / removed).exists()
    top = project.parents[2]
    env = {"PATH": os.environ["PATH"], "HOME": str(top), "LC_ALL": "C"}
    run = subprocess.run(
        ["bash", "-c", command.replace("@TOP@", str(top))],
        cwd=project,
        env=env,
        capture_output=True,
        timeout=20,
        check=False,
    )
    assert not (project / removed).exists(), run.stderr  # (find cfg/ ends in an error, after)
    assert top.is_dir()  # nothing above the test's own folder was touched


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf src",
        "rm -rf assets",
        "mv assets old_assets",
        "rm -rf assets/img",
        "rm -rf cfg",
        'rm -rf "$PWD/assets"',  # $PWD is the folder the line starts in: known
        'x="$PWD"; cd src; rm -rf "$x/assets"',
        'python3 -c \'import subprocess as s; s.run(["ls"]); print("s.env")\'',
        "python3 -c 'from shutil import rmtree as r; r(\"assets\")'",
    ],
)
def test_a_folder_holding_no_protected_path_may_go(project: Path, command: str) -> None:
    assert decide(project, command) == ("allow", "")


def test_a_folder_too_large_to_look_through_is_not_seen(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(path_scan, "HELD_LIMIT", 50)
    decision, reason = decide(project, "rm -rf assets")
    assert decision == "deny"
    assert "cannot see whether 'rm -rf assets' changes a protected path" in reason
    assert "assets holds more than 50 entries" in reason
    assert "ask the user to remove this one" in reason  # the hint: what to do instead
    assert decide(project, "rm -rf assets", ProtectPaths(opaque="ask"))[0] == "ask"
    assert decide(project, "rm -rf assets", ProtectPaths(opaque="allow"))[0] == "allow"


def test_the_folders_of_one_command_share_what_the_guard_looks_through(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two folders of 60 entries each pass one by one under a limit of 100, not together."""
    for name in ("a", "b"):
        (project / name).mkdir()
        for i in range(60):
            (project / name / f"f{i}").write_text("", encoding="utf-8")
    monkeypatch.setattr(path_scan, "HELD_LIMIT", 100)
    assert decide(project, "rm -rf a")[0] == "allow"
    assert decide(project, "rm -rf b")[0] == "allow"
    decision, reason = decide(project, "rm -rf a b")
    assert decision == "deny" and "holds more than 100 entries" in reason


def test_a_place_the_globs_name_is_found_however_large_the_folder_above_it(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The project's ``.git`` under a folder the walk cannot finish: a plain deny naming it."""
    monkeypatch.setattr(path_scan, "HELD_LIMIT", 1)
    decision, reason = decide(project, "rm -rf ../..")
    assert decision == "deny" and "changes .git, a protected path" in reason


def test_a_link_to_a_folder_is_not_walked_through(project: Path, tmp_path: Path) -> None:
    """Deleting a link deletes the link, not what it leads to."""
    (project / "config-link").symlink_to(project / "services")
    assert decide(project, "rm -rf config-link") == ("allow", "")


@pytest.mark.parametrize(
    "command",
    ["rm -rf .venv", "mv .venv .venv-old", "rm -rf node_modules", "rm -rf node_modules/pkg"],
)
def test_a_package_folder_goes_whole_with_the_packages_own_keys(
    project: Path, command: str
) -> None:
    """A virtualenv's ``certifi/cacert.pem`` and a package's test key match ``**/*.pem``, but
    they are the packages' files, not the project's: deleting the folder is everyday work."""
    pem = project / ".venv" / "lib" / "python3.11" / "site-packages" / "certifi" / "cacert.pem"
    pem.parent.mkdir(parents=True)
    pem.write_text("x\n", encoding="utf-8")
    key = project / "node_modules" / "pkg" / "test" / "key.pem"
    key.parent.mkdir(parents=True)
    key.write_text("x\n", encoding="utf-8")
    assert decide(project, command) == ("allow", "")


def test_a_package_folder_holding_the_project_is_still_denied(project: Path) -> None:
    """The skip is for what packages hold: the project's own ``.git`` is looked up first."""
    assert decide(project, "rm -rf ../../../work")[0] == "deny"
    moved = project.parents[2] / "node_modules"
    (project.parents[2] / "work").rename(moved)
    inner = moved / "team" / "project"
    decision, reason = decide(inner, f"rm -rf {moved}")
    assert decision == "deny" and ".git" in reason


@pytest.mark.parametrize(
    ("command", "decision"),
    [
        ("git stash -a", "deny"),  # ignored files too, as git clean -x: the .env goes
        ("git stash push --all", "deny"),
        ("git stash push -u -- services", "deny"),
        ("git stash push -u -- src", "allow"),
        ("git stash --include-untracked -- services", "deny"),
        ("git stash list", "allow"),
        ("git worktree remove --force services", "deny"),
        ("git worktree list", "allow"),
        ("git stash push -u -- ':(exclude)src'", "deny"),  # git matches these: any file
        ("git stash push -u -- '*/config/*'", "deny"),
        ("echo services | git stash push -u --pathspec-from-file=-", "deny"),
        ("git -C services stash push -u api", "deny"),  # its paths are from -C's folder
        ("git -C src stash push -u api", "allow"),
        ("git worktree move services ../elsewhere", "deny"),
    ],
)
def test_git_stash_taking_files_out_of_the_work_tree(
    project: Path, command: str, decision: str
) -> None:
    assert decide(project, command)[0] == decision


def test_a_workspace_package_linked_into_node_modules_is_the_projects_own(project: Path) -> None:
    """npm and pnpm workspaces link ``node_modules/@org/x`` to the project's ``packages/x``:
    reached through the link it is not a package folder, and its secret is found."""
    config = project / "packages" / "shared" / "config"
    config.mkdir(parents=True)
    (config / ".env").write_text("X=1\n", encoding="utf-8")
    (project / "node_modules" / "@org").mkdir(parents=True)
    (project / "node_modules" / "@org" / "shared").symlink_to(project / "packages" / "shared")
    decision, reason = decide(project, "rm -rf node_modules/@org/shared/config")
    assert decision == "deny" and ".env" in reason
    assert decide(project, "rm -rf node_modules")[0] == "allow"  # the link goes, not its folder


def test_ls_of_a_folder_prints_bare_names_that_xargs_finds_here(project: Path) -> None:
    """``ls x`` prints ``services``, not ``x/services``: ``rm -rf`` then takes the project's."""
    (project / "x" / "services").mkdir(parents=True)
    command = "ls x | xargs rm -rf"
    decision, reason = decide(project, command)
    assert decision == "deny", reason
    subprocess.run(["bash", "-c", command], cwd=project, capture_output=True, timeout=20)
    assert not (project / "services").exists()  # the proof: it was the project's folder


def test_a_package_folders_own_files_are_looked_at(project: Path) -> None:
    """Only the packages inside a package folder are skipped, not what lies in it directly."""
    (project / "node_modules").mkdir()
    (project / "node_modules" / ".env").write_text("X=1\n", encoding="utf-8")
    decision, reason = decide(project, "rm -rf node_modules")
    assert decision == "deny" and "node_modules/.env" in reason


def test_a_place_named_outright_past_the_budget_gets_the_opaque_answer(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The looks at the places the globs name share the budget: past it, the folder is not
    seen, and the ``opaque`` option decides (never a hit on a glob that does not exist)."""
    big = project / "sub" / ".claude" / "big"
    big.mkdir(parents=True)
    for i in range(50):
        (big / f"f{i}").write_text("", encoding="utf-8")
    monkeypatch.setattr(path_scan, "HELD_LIMIT", 20)
    paths = ["sub/.claude/settings*.json"]
    decision, reason = decide(project, "rm -rf sub", ProtectPaths(paths=paths))
    assert decision == "deny" and "sub holds more than 20 entries" in reason
    assert decide(project, "rm -rf sub", ProtectPaths(paths=paths, opaque="allow")) == ("allow", "")


def test_a_glob_matching_more_than_the_guard_looks_at_is_not_seen(project: Path) -> None:
    for i in range(1001):
        (project / "many" / f"d{i}" / "c").mkdir(parents=True)
    decision, reason = decide(project, "rm -rf many/d*/*")
    assert decision == "deny" and "matches more than 1,000 paths" in reason
    assert decide(project, "rm -rf many/d99*/*")[0] == "allow"  # 11 folders, nothing protected


@pytest.mark.parametrize(
    "error",
    [PermissionError(13, "Permission denied"), OSError(36, "File name too long")],
    ids=["unreadable", "name-too-long"],
)
def test_a_folder_that_cannot_be_read_is_not_seen(
    project: Path, monkeypatch: pytest.MonkeyPatch, error: OSError
) -> None:
    """``mv`` takes an unreadable folder along with what it holds, inside the one it moves or
    the one it moves itself: that folder gets the ``opaque`` answer, naming the one it could
    not read (the tests run as root, which reads everything, so the refusal is made here)."""
    locked = str(project / "services" / "api")
    real_scandir = os.scandir

    def scandir(path: Any) -> Any:
        if str(path) == locked:
            raise error
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    decision, reason = decide(project, "mv services @TOP@/elsewhere")
    assert decision == "deny"
    assert "services/api, inside services, cannot be read" in reason
    decision, reason = decide(project, "mv services/api @TOP@/elsewhere")  # the folder itself
    assert decision == "deny"
    assert "services/api cannot be read" in reason
    assert decide(project, "mv services @TOP@/x", ProtectPaths(opaque="ask"))[0] == "ask"


def test_a_folder_named_by_raw_bytes_is_the_one_on_disk(project: Path) -> None:
    """``$'\\xff'`` is the byte 0xff, as bash makes it, not the letter ``ÿ``."""
    folder = project / os.fsdecode(b"\xff") / "sub"
    folder.mkdir(parents=True)
    (folder / ".env").write_text("X=1\n", encoding="utf-8")
    command = "rm -rf $'\\xff'"
    decision, reason = decide(project, command)
    assert decision == "deny" and ".env" in reason
    subprocess.run(["bash", "-c", command], cwd=project, capture_output=True, timeout=20)
    assert not folder.exists()  # the proof: that was the folder bash removed


@pytest.mark.parametrize(
    "command",
    [
        "ls logs/*.log | xargs rm -f",  # the paths the pattern matches, in logs
        "ls logs | xargs -I{} rm logs/{}",  # names put back in their folder
        "find logs -name '*.log' -exec mv {} @TOP@/ \\;",  # a folder the names go to
    ],
)
def test_listings_whose_names_go_elsewhere_are_judged_where_they_are(
    project: Path, command: str
) -> None:
    """A listing's names are taken whole where it lists them, not in a folder they are moved
    into: ``mv {} /tmp/`` does not delete what ``/tmp`` holds (nor walk it)."""
    (project / "logs").mkdir()
    (project / "logs" / "a.log").write_text("x\n", encoding="utf-8")
    (project.parents[2] / "other" / ".env").parent.mkdir(parents=True)
    (project.parents[2] / "other" / ".env").write_text("X=1\n", encoding="utf-8")
    assert decide(project, command) == ("allow", "")
