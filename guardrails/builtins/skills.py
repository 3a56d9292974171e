"""``skill_discovery``: point the model at the skills that fit the prompt.

Reads a folder of skills in Claude's layout (``<folder>/<name>/SKILL.md``, or
``<folder>/<name>.md``), each with YAML front matter, ranks them against the
prompt and injects the best few as one short list: name, description, where
the SKILL.md is, and why it matched.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import threading
from dataclasses import dataclass, field
from typing import Any, Final

from ..definition.matchers import compile_glob
from ..errors import GuardrailsError
from ..results import HookResult

__all__ = ["SkillDiscovery", "skill_discovery"]

log = logging.getLogger("guardrails.skills")

KEYWORD_WEIGHT: Final = 3
GLOB_WEIGHT: Final = 3
NAME_WEIGHT: Final = 2
DESCRIPTION_WEIGHT: Final = 1
#: characters of a description shown per skill (the whole list stays well under the cap)
_DESCRIPTION_CHARS: Final = 200
_NAME_CHARS: Final = 64
#: bytes of a skill file read: the front matter sits at the top
_READ_BYTES: Final = 64 * 1024
_MAX_SKILLS: Final = 2000
_MAX_PATHS: Final = 50
#: reasons shown per skill (each names a keyword, file or words)
_MAX_REASONS: Final = 6

_WORD = re.compile(r"[a-z0-9]+")
_PATH = re.compile(
    r"(?<![\w/.@+-])((?:~|\.{1,2})?/?(?:[\w.@+-]+/)*[\w@+-][\w.@+-]*\.[A-Za-z0-9]{1,10})(?![\w/])"
)
_FRONT_END = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.M)
_STOPWORD_TEXT: Final = """
a about after all also an and any are as at be been before being but by can could
did do does doing done etc for from get gets had has have how i if in into is it its
just let like make me more most my need needs no not of on once only or other our out
over please should so some such than that the their them then there these they this
those through to too up us use used uses using via want was way we were what when
where which while who why will with would you your skill skills claude user users
help helps file files work works task tasks
"""


def _stem(word: str) -> str:
    """Light suffix folding, so "spreadsheets" meets "spreadsheet" and "rebasing" "rebase".

    Not a full stemmer: plurals, ``-ing``, ``-ed``, a doubled final consonant
    and a final ``e`` on longer words; short words stay as they are.
    """
    w = word
    if len(w) <= 3:
        return w
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) >= 6 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) >= 5 and w.endswith(("ed", "ches", "shes", "sses", "xes", "zes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "aeioulsz":
        w = w[:-1]  # committ -> commit
    if len(w) >= 5 and w.endswith("e"):
        w = w[:-1]
    return w


#: common words and skill boilerplate, which say nothing about which skill fits
_STOPWORDS: Final = frozenset(_STOPWORD_TEXT.split()) | {_stem(w) for w in _STOPWORD_TEXT.split()}


def _tokens(text: str) -> list[str]:
    return [_stem(w) for w in _WORD.findall(text.lower())]


def _content_words(text: str, min_len: int = 2) -> dict[str, str]:
    """Stem -> the word as written (first seen), for the words that carry meaning."""
    out: dict[str, str] = {}
    for word in _WORD.findall(text.lower()):
        stem = _stem(word)
        if len(stem) >= min_len and stem not in _STOPWORDS:
            out.setdefault(stem, word)
    return out


@dataclass
class Skill:
    """One parsed skill file."""

    name: str
    description: str
    path: str
    keywords: list[str] = field(default_factory=list)
    globs: list[str] = field(default_factory=list)
    #: (keyword as written, its tokens joined by spaces)
    phrases: list[tuple[str, str]] = field(default_factory=list)
    name_words: dict[str, str] = field(default_factory=dict)
    description_words: dict[str, str] = field(default_factory=dict)
    glob_res: list[tuple[bool, re.Pattern[str]]] = field(default_factory=list)


class _Malformed(Exception):
    pass


def _string_list(meta: dict[str, Any], key: str) -> list[str]:
    value = meta.get(key)
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return [str(v).strip() for v in value if str(v).strip()]
    raise _Malformed(f"{key} must be a list of strings, got {type(value).__name__}")


def parse_skill(path: str, default_name: str, *, loose: bool) -> Skill | None:
    """Parse one skill file. ``None``: a loose ``*.md`` without front matter (not a skill).

    Raises ``_Malformed`` (or ``OSError``) for a file that should be a skill but is not.
    """
    with open(path, "rb") as f:
        raw = f.read(_READ_BYTES)
    text = raw.decode("utf-8-sig", errors="replace").replace("\r\n", "\n")
    if not text.startswith("---\n"):
        if loose:
            return None
        raise _Malformed("no YAML front matter (the file must start with '---')")
    end = _FRONT_END.search(text, 4)
    if end is None:
        raise _Malformed("the YAML front matter has no closing '---'")
    import yaml

    try:
        meta = yaml.load(
            text[4 : end.start()], Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        )
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise _Malformed(f"invalid YAML front matter{where}: {' '.join(problem.split())}") from None
    if not isinstance(meta, dict):
        raise _Malformed("the front matter is not a mapping of name, description, ...")
    name = meta.get("name", default_name)
    if not isinstance(name, str) or not name.strip():
        raise _Malformed("name must be a non-empty string")
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        raise _Malformed("description is missing (it says when the skill applies)")
    keywords = _string_list(meta, "keywords")
    globs = _string_list(meta, "globs") + _string_list(meta, "paths")
    skill = Skill(
        name=" ".join(name.split()),
        description=" ".join(description.split()),
        path=path,
        keywords=keywords,
        globs=globs,
    )
    for kw in keywords:
        words = _tokens(kw)
        if words:
            skill.phrases.append((kw, " ".join(words)))
    skill.name_words = _content_words(skill.name)
    skill.description_words = _content_words(skill.description, min_len=3)
    for g in globs:
        anchored = "/" in g.rstrip("/")
        try:
            skill.glob_res.append((anchored, compile_glob(g.removeprefix("./"), path=True)))
        except GuardrailsError as exc:
            raise _Malformed(f"globs: {exc}") from None
    return skill


@dataclass
class _Entry:
    version: tuple[int, int]
    skill: Skill | None
    error: str | None


class _Folder:
    """A skills folder, parsed once; a file is parsed again when its mtime or size changes."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.entries: dict[str, _Entry] = {}
        self.lock = threading.Lock()

    def candidates(self) -> list[tuple[str, str, bool]]:
        """(file, default name, loose) for every possible skill file, sorted."""
        found: list[tuple[str, str, bool]] = []
        try:
            with os.scandir(self.path) as it:
                for e in it:
                    if e.name.startswith("."):
                        continue
                    if e.is_dir():
                        found.append((os.path.join(e.path, "SKILL.md"), e.name, False))
                    elif e.name.lower().endswith(".md") and e.is_file():
                        found.append((e.path, e.name[:-3], True))
        except OSError:  # no folder (yet), not a folder, unreadable
            return []
        found.sort()
        return found[:_MAX_SKILLS]

    def load(self) -> tuple[list[Skill], list[tuple[str, tuple[int, int], str]]]:
        """The skills, and the (file, version, problem) of each malformed one."""
        with self.lock:
            fresh: dict[str, _Entry] = {}
            for path, default_name, loose in self.candidates():
                try:
                    st = os.stat(path)
                except OSError:
                    continue  # a subfolder without SKILL.md
                if not stat.S_ISREG(st.st_mode):
                    continue
                version = (st.st_mtime_ns, st.st_size)
                entry = self.entries.get(path)
                if entry is None or entry.version != version:
                    entry = _parse_entry(path, default_name, loose, version)
                fresh[path] = entry
            self.entries = fresh
        skills = [e.skill for e in fresh.values() if e.skill is not None]
        bad = [(p, e.version, e.error) for p, e in fresh.items() if e.error is not None]
        return skills, bad


def _parse_entry(path: str, default_name: str, loose: bool, version: tuple[int, int]) -> _Entry:
    try:
        return _Entry(version, parse_skill(path, default_name, loose=loose), None)
    except _Malformed as exc:
        return _Entry(version, None, str(exc))
    except Exception as exc:  # unreadable file, YAML oddity: skip it, never fail the prompt
        return _Entry(version, None, f"cannot read it ({type(exc).__name__}: {exc})")


@dataclass
class Match:
    """A skill's score against one prompt, with the reasons."""

    skill: Skill
    score: int
    why: list[str]


class SkillDiscovery:
    """Inject the skills (``SKILL.md`` front matter) that best match the prompt.

    Each skill's ``name``, ``description``, optional ``keywords`` (a list, or a
    comma-separated string) and ``globs`` (file globs; ``paths`` works too) are
    scored against the prompt, case-insensitively, word by word (plurals
    folded, common words ignored): a keyword (a phrase of one or more words)
    weighs 3, a file path in the prompt matching one of the globs 3 (a glob
    without ``/`` is tested against the file name), a word of the name 2, a
    word of the description 1; a word counts once, at its highest weight.
    The ``top`` skills scoring at least ``min_score`` are injected as one short
    list (description cut to 200 characters), each with its SKILL.md path and
    what matched; nothing is injected when nothing matches.

    ``folder`` is resolved against the definition file's folder, else the
    event's ``cwd``. Files are parsed once and again when their mtime or size
    changes. A malformed skill is skipped and reported once (system message and
    log), never failing the prompt.
    """

    hook_name = "skill_discovery"

    def __init__(self, folder: str = ".claude/skills", top: int = 3, min_score: float = 1) -> None:
        if not isinstance(folder, str | os.PathLike) or not os.fspath(folder).strip():
            raise ValueError(f"folder must be a non-empty path, got {folder!r}")
        if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= 20:
            raise ValueError(f"top must be an integer from 1 to 20, got {top!r}")
        if (
            isinstance(min_score, bool)
            or not isinstance(min_score, int | float)
            or not min_score > 0
        ):
            raise ValueError(f"min_score must be a positive number, got {min_score!r}")
        self.folder = os.fspath(folder)
        self.top = top
        self.min_score = min_score
        self._folders: dict[str, _Folder] = {}
        self._reported: set[tuple[str, tuple[int, int]]] = set()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SkillDiscovery(folder={self.folder!r}, top={self.top}, min_score={self.min_score})"

    def folder_for(self, event: Any, ctx: Any) -> str:
        folder = os.path.expanduser(self.folder)
        if os.path.isabs(folder):
            return os.path.normpath(folder)
        source = getattr(getattr(ctx, "definition", None), "source", None)
        base = os.path.dirname(os.path.abspath(source)) if source else (event.cwd or os.getcwd())
        return os.path.normpath(os.path.join(base, folder))

    def skills(self, folder: str) -> tuple[list[Skill], list[tuple[str, tuple[int, int], str]]]:
        with self._lock:
            cached = self._folders.get(folder)
            if cached is None:
                cached = self._folders[folder] = _Folder(folder)
        return cached.load()

    def rank(self, prompt: str, skills: list[Skill], cwd: str = "") -> list[Match]:
        """Skills scoring at least ``min_score``, best first (ties by name)."""
        words = _tokens(prompt)
        present = set(words)
        joined = " " + " ".join(words) + " "
        paths = _mentioned_paths(prompt, cwd)
        out: list[Match] = []
        for skill in skills:
            score = 0
            why: list[str] = []
            used: set[str] = set()
            for written, phrase in skill.phrases:
                if f" {phrase} " in joined:
                    score += KEYWORD_WEIGHT
                    why.append(f'keyword "{written}"')
                    used.update(phrase.split())
            for path, base in paths:
                if any(r.fullmatch(path if anchored else base) for anchored, r in skill.glob_res):
                    score += GLOB_WEIGHT
                    why.append(f"file {path}")
                    break
            for w in sorted(skill.name_words.keys() & present - used):
                score += NAME_WEIGHT
                why.append(f'name "{skill.name_words[w]}"')
                used.add(w)
            desc = sorted(skill.description_words.keys() & present - used)
            if desc:
                score += DESCRIPTION_WEIGHT * len(desc)
                shown = ", ".join(f'"{skill.description_words[w]}"' for w in desc[:5])
                why.append(f"description {shown}")
            if score >= self.min_score:
                out.append(Match(skill, score, why))
        out.sort(key=lambda m: (-m.score, m.skill.name))
        return out

    def __call__(self, event: Any, ctx: Any) -> HookResult | None:
        if event.event_name != "UserPromptSubmit" or not event.prompt:
            return None
        folder = self.folder_for(event, ctx)
        skills, bad = self.skills(folder)
        note = self._new_problems(bad, event.cwd)
        matches = self.rank(event.prompt, skills, event.cwd)[: self.top]
        text = self.render(matches, folder, event.cwd) if matches else None
        if text is None and note is None:
            return None
        return HookResult(additional_context=text, system_message=note)

    def render(self, matches: list[Match], folder: str, cwd: str) -> str:
        lines = [
            f"Skills matching this prompt (skill_discovery, from {_shown(folder, cwd)}; "
            "each SKILL.md holds the skill's instructions):"
        ]
        for m in matches:
            s = m.skill
            why = "; ".join(m.why[:_MAX_REASONS])
            lines.append(
                f"- {_cut(s.name, _NAME_CHARS)} ({_shown(s.path, cwd)}): "
                f"{_cut(s.description, _DESCRIPTION_CHARS)} [matched {why}]"
            )
        return "\n".join(lines)

    def _new_problems(self, bad: list[tuple[str, tuple[int, int], str]], cwd: str) -> str | None:
        fresh = []
        with self._lock:
            for path, version, problem in bad:
                if (path, version) in self._reported:
                    continue
                self._reported.add((path, version))
                fresh.append(f"{_shown(path, cwd)}: {problem}")
        if not fresh:
            return None
        for item in fresh:
            log.warning("skill_discovery skipped %s", item)
        return "skill_discovery skipped " + "; ".join(fresh)


def _mentioned_paths(prompt: str, cwd: str) -> list[tuple[str, str]]:
    """File paths named in the prompt: (path relative to ``cwd`` when inside it, base name).

    The first ``_MAX_PATHS`` distinct ones: a pasted listing must not cost a
    glob test per line per skill.
    """
    out: dict[str, str] = {}
    prefix = cwd.rstrip("/") + "/" if cwd else None
    for m in _PATH.finditer(prompt):
        path = m.group(1)
        if prefix and path.startswith(prefix):
            path = path[len(prefix) :]
        while path.startswith("./"):
            path = path[2:]
        out.setdefault(path, path.rsplit("/", 1)[-1])
        if len(out) >= _MAX_PATHS:
            break
    return list(out.items())


def _shown(path: str, cwd: str) -> str:
    if cwd:
        prefix = cwd.rstrip("/") + "/"
        if path.startswith(prefix):
            return path[len(prefix) :]
    return path


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    if space > limit // 2:
        head = head[:space]
    return head.rstrip(" ,.;:") + "…"


#: the ready instance: ``.claude/skills``, the top 3 matches
skill_discovery = SkillDiscovery()
