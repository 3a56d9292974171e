"""The path guard's view of what it cannot name: unknown parts of a path, unlisted paths.

``PathRules`` holds the compiled protected globs, anchored at the project root,
and answers three questions besides "is this path protected":

* ``could_be``: a path with unknown parts (``"$F"``, ``"$D/report.txt"``) could
  be protected if one of the rules' *samples* (``.env``, ``x.pem``,
  ``.git/config``...) fits it;
* ``under``: which protected path a command reaches when it writes or deletes
  paths it does not name under a directory (``tar -x``, ``find -delete``,
  ``grep -rl | xargs sed -i``): an existing protected file or folder there,
  or a sample matching the names it is limited to;
* ``held``: which protected path a deleted or moved directory holds, at any depth:
  the places the globs name outright (the project's ``.git``, its Claude settings,
  the guard's own files) looked up however deep they are, then a walk of the
  directory, ``CAP`` when it holds more entries than the guard may look through.
"""

from __future__ import annotations

import fnmatch
import glob as _glob
import os
import posixpath
import re
from collections import deque
from collections.abc import Callable, Sequence
from typing import Final

__all__ = [
    "CAP",
    "GLOB_MAX",
    "HELD_LIMIT",
    "PACKAGE_FOLDERS",
    "UNREAD",
    "Budget",
    "PathRules",
    "Roots",
    "glob_matches",
    "resolved",
]

#: the project root, or several (the first is the project's; see ``ProtectPaths``)
Roots = str | tuple[str, ...]

#: entries a directory walk looks at before giving up
_WALK_LIMIT: Final = 5000
#: folders a package manager fills: a deleted folder's walk looks at their own files but not
#: into the packages in them (a virtualenv's ``certifi/cacert.pem``, a package's test key are
#: the packages', not the project's secrets)
PACKAGE_FOLDERS: Final = frozenset({"node_modules", "site-packages", "dist-packages"})
#: entries the walks of one command's deleted or moved folders look at, in all (a
#: build or cache folder passes, at ~1 us an entry; a whole home directory does not)
HELD_LIMIT: Final = 200_000
CAP: Final = "\x00cap"  # a walk that gave up: the answer is not known
UNREAD: Final = "\x00unread"  # a folder in a deleted or moved one could not be listed
#: paths a glob in a command may match for the guards to look at each
GLOB_MAX: Final = 1000


class Budget:
    """Entries walks may still look at, shared by the walks of one command so that
    ``rm -rf *`` over many folders costs one budget, not one per folder."""

    __slots__ = ("left", "limit")

    def __init__(self, entries: int | None = None) -> None:
        self.limit = HELD_LIMIT if entries is None else entries
        self.left = self.limit


class _PathRule:
    __slots__ = ("dir_prefix", "head", "name_re", "negate", "rules", "samples", "source")

    def __init__(self, source: str) -> None:
        from ..definition.matchers import ArgRule
        from ..errors import DefinitionError

        self.source = source
        self.negate = source.startswith("!")
        body = source[1:] if self.negate else source
        if not body.strip():
            raise ValueError(f"empty glob {source!r}")
        globs = [body]
        if body.endswith("/**") and len(body) > 3:
            globs.append(body[:-3])  # the directory itself
        try:
            self.rules = [ArgRule(g) for g in globs]
        except DefinitionError as exc:
            raise ValueError(exc.message) from None
        last = body.rstrip("/").rpartition("/")[2]
        # a folder rule (".git/**"): its folder; a name rule ("**/.env*"): its name glob
        self.dir_prefix = body[:-3] if body.endswith("/**") and "*" not in body[:-3] else None
        self.name_re = None if last == "**" else re.compile(fnmatch.translate(last), re.I)
        self.samples = _samples(body)
        self.head = None if self.negate else _head(body)

    def matches(self, path: str, anchor: str) -> bool:
        """``path``: absolute and normalised; ``anchor``: where relative globs start."""
        return any(r.matches_absolute(path, anchor) for r in self.rules)


def glob_matches(pattern: str, recursive: bool = False, hidden: bool = False) -> list[str] | None:
    """What ``pattern`` matches, or ``None`` past :data:`GLOB_MAX` paths (not all seen)."""
    found: list[str] = []
    for path in _glob.iglob(pattern, recursive=recursive, include_hidden=hidden):
        if len(found) == GLOB_MAX:
            return None
        found.append(path)
    return found


def _head(glob: str) -> str | None:
    """The place a glob names outright: its literal folders before the first wildcard
    (``.git/**`` -> ``.git``, ``.claude/settings*.json`` -> ``.claude``), or the whole
    path when it has none; ``None`` for a glob that may match at any depth (``**/.env*``)."""
    from ..definition.matchers import literal_prefix

    prefix = literal_prefix(glob)
    if prefix == glob:
        return glob.rstrip("/") or "/"
    if glob.startswith("**"):
        return None
    return prefix.rpartition("/")[0] if "/" in prefix else ""


def resolved(path: str) -> str:
    """Where ``path`` leads; as written (normalised) where a link cannot be followed
    (``/proc/1/cwd``)."""
    try:
        return os.path.realpath(path)
    except OSError:
        return posixpath.normpath(path)


def _samples(glob: str) -> list[str]:
    """Paths a glob matches, for guessing: ``**/.env*`` -> ``.env``, ``.git/**`` -> ``.git``
    and ``.git/config``, ``*.pem`` -> ``x.pem``."""
    first = re.sub(r"\{([^{},]*),?[^{}]*\}", r"\1", glob)
    text = first.replace("**/", "").replace("/**", "/config")
    text = re.sub(r"\[!?\^?(.)[^\]]*\]", r"\1", text)
    plain = text.replace("*", "").replace("?", "x")
    named = text.replace("*", "x").replace("?", "x")
    found = [s for s in dict.fromkeys([plain, named]) if s and not s.endswith("/")]
    if glob.endswith("/**"):
        found.append(glob[:-3].replace("**/", ""))
    return found


class PathRules:
    """The protected globs, compiled once."""

    __slots__ = ("name_rules", "names_re", "rules")

    def __init__(self, globs: Sequence[str]) -> None:
        self.rules: list[_PathRule] = []
        for i, glob in enumerate(globs):
            if not isinstance(glob, str):
                raise TypeError(f"paths[{i}] must be a string, got {type(glob).__name__}")
            try:
                self.rules.append(_PathRule(glob))
            except ValueError as exc:
                raise ValueError(f"paths[{i}]: {exc}") from None
        self.name_rules = [r for r in self.rules if r.name_re is not None and not r.negate]
        #: every name rule's last part in one pattern: what a walk asks of each entry
        self.names_re = (
            re.compile(
                "|".join(f"(?:{r.name_re.pattern})" for r in self.name_rules if r.name_re), re.I
            )
            if self.name_rules
            else None
        )

    def protected_by(self, path: str, root: Roots, cwd: str | None = None) -> str | None:
        """The glob that protects ``path`` (absolute, or relative to ``cwd``, default the
        root), with relative globs anchored at ``root`` (or at each of several roots), or
        ``None``. A path is checked as written and with symlinks resolved."""
        roots = (root,) if isinstance(root, str) else root
        base = posixpath.normpath(os.path.abspath(cwd or roots[0]))
        lexical = posixpath.normpath(posixpath.join(base, path))
        places = [(posixpath.normpath(os.path.abspath(a)), os.path.realpath(a)) for a in roots]
        return self._verdict(lexical, os.path.realpath(lexical), places)

    def _verdict(self, lexical: str, real: str, places: list[tuple[str, str]]) -> str | None:
        """:meth:`protected_by` of a path as written and resolved, the anchors as given
        and resolved: the last rule that matches decides (a ``!glob`` lets a path go)."""
        for anchor, real_anchor in places:
            for candidate, where in ((lexical, anchor), (real, real_anchor)):
                verdict: str | None = None
                for rule in self.rules:
                    if rule.matches(candidate, where):
                        verdict = None if rule.negate else rule.source
                if verdict is not None:
                    return verdict
        return None

    def could_be(
        self, pattern: re.Pattern[str], root: Roots, near: str = ""
    ) -> tuple[str, str] | None:
        """A protected sample path (absolute) the pattern fits: ``(glob, sample)``; a rule
        for any depth (``**/.env*``) is also tried in the folder ``near``."""
        for rule in self.rules:
            if rule.negate:
                continue
            for sample in rule.samples:
                bases = [root] if isinstance(root, str) else list(root)
                if near and rule.source.lstrip("!").startswith("**/"):
                    bases.append(near)
                for base in bases:
                    full = posixpath.normpath(posixpath.join(base, posixpath.expanduser(sample)))
                    if pattern.fullmatch(full) and self.protected_by(full, root) is not None:
                        return rule.source, full
        return None

    def under(
        self, where: str, names: Sequence[str] | None, hidden: str, root: Roots
    ) -> tuple[str, str] | None:
        """A protected path that writing or deleting unnamed entries under ``where`` (only
        those whose names match ``names``) may reach: ``(glob, path)``, ``(CAP, where)``
        when the walk gave up, or ``None``. Without names, every existing entry counts
        (a walk); with names, a protected name they match, or an entry of a protected
        folder below that matches them. ``hidden``: ``all``, ``nogit`` (not ``.git``),
        ``none`` or ``tracked`` (no dot-files: what git lists)."""
        if names is None:
            return self._walk(where, None, hidden, root)
        visible_only = hidden in ("none", "tracked")
        for rule in self.name_rules:  # a name the command is limited to may be protected
            for sample in rule.samples:
                name = posixpath.basename(sample)
                if (not visible_only or not name.startswith(".")) and any(
                    fnmatch.fnmatch(name.lower(), n.lower()) for n in names
                ):
                    candidate = posixpath.join(where, name)
                    if self.protected_by(candidate, root) is not None:
                        return rule.source, candidate
        where = posixpath.normpath(where)
        anchors = (root,) if isinstance(root, str) else root
        for rule, anchor in ((r, a) for r in self.rules for a in anchors):
            if rule.dir_prefix is None or rule.negate:  # a protected folder below: its names
                continue
            folder = posixpath.normpath(
                posixpath.join(anchor, posixpath.expanduser(rule.dir_prefix))
            )
            if visible_only and posixpath.basename(folder).startswith("."):
                continue
            if folder == where or folder.startswith(where.rstrip("/") + "/"):
                found = self._walk(folder, names, "all", root)
                if found is not None:
                    return found
            elif where.startswith(folder + "/"):
                return self._walk(where, names, "all", root)
        return None

    def named_folders(
        self, where: str, names: Sequence[str], hidden: str, budget: Budget
    ) -> list[str] | None:
        """The folders under ``where``, at any depth, whose names match ``names``: what
        ``find -name`` or ``ls -d`` lists for ``rm -rf`` or ``mv`` to take whole; ``None``
        when there are more entries than ``budget`` lets the walk look at, or a folder in it
        cannot be listed."""
        found: list[str] = []
        dots, git = hidden in ("none", "tracked"), hidden == "nogit"
        queue = deque([posixpath.normpath(where)])
        while queue:
            folder = queue.popleft()
            try:
                entries = [e for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)]
            except (FileNotFoundError, NotADirectoryError):  # gone meanwhile
                continue
            except OSError:  # unreadable: the folders it lists are not known
                return None
            budget.left -= len(entries)
            if budget.left < 0:
                return None
            for entry in entries:
                name = entry.name
                if (dots and name.startswith(".")) or (git and name == ".git"):
                    continue
                if any(fnmatch.fnmatch(name, n) for n in names):
                    found.append(entry.path)
                else:
                    queue.append(entry.path)
        return found

    def held(
        self,
        where: str,
        root: Roots,
        budget: Budget | None = None,
        look: bool = True,
        walk: bool = True,
    ) -> tuple[str, str] | None:
        """A protected path inside directory ``where``, at any depth: ``(glob, path)``,
        ``(CAP, where)`` when it holds more entries than ``budget`` lets the walk look
        at, or ``None``. ``look``: the places the globs name outright, so deleting a folder
        far above the project still finds its ``.git``; ``walk``: the folder's entries (a
        caller may do the two apart, the cheap looks of a whole line first)."""
        if not os.path.isdir(where) or os.path.islink(where):
            return None
        where = posixpath.normpath(where)
        budget = budget or Budget()
        found = self._look(where, root, budget) if look else None
        if found is not None or not walk:
            return found
        in_package = not PACKAGE_FOLDERS.isdisjoint(resolved(where).split("/"))
        return self._walk(where, None, "all", root, budget=budget, packages=in_package)

    def _look(self, where: str, root: Roots, budget: Budget) -> tuple[str, str] | None:
        """The places the globs name outright (``.git``, ``.claude``) inside ``where``."""
        inside = where.rstrip("/") + "/"
        anchors = (root,) if isinstance(root, str) else root
        for rule in self.rules:
            if rule.head is None:
                continue
            for anchor in anchors:
                head = posixpath.normpath(posixpath.join(anchor, posixpath.expanduser(rule.head)))
                if not (head == where or head.startswith(inside)) or not os.path.lexists(head):
                    continue
                glob = self.protected_by(head, root)
                if glob is not None:
                    return glob, head
                if head != where:
                    found = self._walk(head, None, "all", root, budget=budget)
                    if found is not None:
                        return found if found[0] != CAP else (CAP, where)
        return None

    def inside(
        self, where: str, root: Roots, skip: Callable[[str], bool] | None = None
    ) -> tuple[str, str] | None:
        """A protected path anywhere inside directory ``where``, leaving out entries whose
        names ``skip`` says to (and what they hold); ``(CAP, where)`` when there are too
        many entries to look through."""
        return self._walk(where, None, "all", root, skip=skip)

    def _walk(
        self,
        where: str,
        names: Sequence[str] | None,
        hidden: str,
        root: Roots,
        skip: Callable[[str], bool] | None = None,
        budget: Budget | None = None,
        packages: bool | None = None,
    ) -> tuple[str, str] | None:
        """``packages``: a walk of a deleted folder (``held``), which looks at the files of a
        package folder (``node_modules``, ``site-packages``) but not into its packages;
        ``True`` when ``where`` is in one already (where it really is: a workspace links
        ``node_modules/@org/x`` to the project's own ``packages/x``)."""
        if not os.path.isdir(where) or os.path.islink(where):
            return None
        budget = budget or Budget(_WALK_LIMIT)
        anchors = (root,) if isinstance(root, str) else root
        places = [(posixpath.normpath(os.path.abspath(a)), os.path.realpath(a)) for a in anchors]
        dirs = tuple(
            posixpath.normpath(posixpath.join(base, posixpath.expanduser(r.dir_prefix))) + "/"
            for r in self.rules
            for place in places
            for base in dict.fromkeys(place)
            if r.dir_prefix is not None and not r.negate
        )
        every = any(r.name_re is None and r.dir_prefix is None for r in self.rules)
        named = self.names_re
        dots, git = hidden in ("none", "tracked"), hidden == "nogit"
        # below ``where`` the walk goes only through real folders (never a link to one):
        # an entry's resolved path is the folder's, joined with its name, unless it is a link
        lexical_top = posixpath.normpath(os.path.abspath(where))
        queue: deque[tuple[str, str, bool]] = deque(
            [(lexical_top, resolved(where), bool(packages))]
        )
        while queue:
            folder, real_folder, in_package = queue.popleft()
            try:
                entries = list(os.scandir(folder))
            except (FileNotFoundError, NotADirectoryError):  # gone meanwhile: nothing there
                continue
            except OSError:  # unreadable, a name too long: `mv` takes it along unread
                if packages is None:
                    continue
                return UNREAD, folder
            over = len(entries) > budget.left  # looked at as far as the budget goes
            if over:
                entries = entries[: max(budget.left, 0)]
            budget.left -= len(entries)
            lexical_in = folder.rstrip("/") + "/"
            real_in = real_folder.rstrip("/") + "/"
            for entry in entries:
                name = entry.name
                if (dots and name[0] == ".") or (git and name == ".git"):
                    continue
                is_dir = entry.is_dir(follow_symlinks=False)
                if skip is not None and skip(name):
                    continue
                path = lexical_in + name
                link = not is_dir and entry.is_symlink()
                real = resolved(path) if link else real_in + name
                if (names is None or any(fnmatch.fnmatch(name, n) for n in names)) and (
                    every
                    or link
                    or (path + "/").startswith(dirs)
                    or (real + "/").startswith(dirs)
                    or (named is not None and named.fullmatch(name) is not None)
                ):
                    glob = self._verdict(path, real, places)
                    if glob is not None:
                        return glob, path
                if is_dir and not in_package:  # a package's files are its own
                    queue.append((path, real, packages is not None and name in PACKAGE_FOLDERS))
            if over:
                budget.left = -1
                return CAP, where
        return None
