"""The compiled-definition cache: a hook process skips parsing and validating the file.

``hookrails hook`` runs once per Claude Code event, and loading ``agent.yaml``
the full way (PyYAML, then the pydantic models) costs each event well over
100 ms. The first load validates the file as usual and stores the validated
definition as JSON in the cache folder, with the regexes its globs translated
to; later processes rebuild the runtime definition from that JSON (no PyYAML,
pydantic or wcmatch) and resolve only the hooks of the event at hand.

An entry is used only while the file's text, the hookrails version, the Python
version and the installed wcmatch are the ones it was built from, so an edit
to the file applies on the next event. Hook modules (``hooks.py``) are not
cached: each process imports them fresh.

Folder: ``$HOOKRAILS_CACHE_DIR`` (set but empty: no cache), else
``$XDG_CACHE_HOME/hookrails``, else ``~/.cache/hookrails`` (``%LOCALAPPDATA%``
on Windows). A folder that cannot be written only costs speed.
"""

from __future__ import annotations

import json
import os
import sys

from .._dataclass_free import field_names
from .._version import __version__
from ..errors import DefinitionError
from .matchers import GLOB_TRANSLATIONS
from .model import AgentDefinition, HookMatcher, ToolSpec

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Collection
    from typing import Any

__all__ = ["CACHE_ENV", "cache_dir", "entry_path", "load_definition"]

CACHE_ENV = "HOOKRAILS_CACHE_DIR"
_FORMAT = 2  # 2: AgentDefinition.instructions
#: AgentDefinition fields stored as they are (tools and hooks are stored field by field)
_PLAIN = tuple(
    name
    for name in field_names(AgentDefinition)
    if name not in ("tools", "hooks", "source", "locations")
)


def cache_dir() -> str | None:
    """The cache folder, or ``None`` when caching is switched off."""
    env = os.environ.get(CACHE_ENV)
    if env is not None:
        return os.path.abspath(env) if env else None
    base = os.environ.get("XDG_CACHE_HOME") or ""
    if not base and os.name == "nt":  # pragma: no cover - Windows
        base = os.environ.get("LOCALAPPDATA", "")
    if not base:
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "hookrails")


def entry_path(config: str, folder: str) -> str:
    """The cache file for the definition file ``config`` (an absolute path), named by the
    path's 32-bit FNV-1a hash (computed here: ``zlib`` costs a hook process 0.4 ms; the
    entry records its path, so a collision only costs a rebuild)."""
    tag = 0x811C9DC5
    for byte in config.encode("utf-8", "surrogateescape"):
        tag = ((tag ^ byte) * 0x01000193) & 0xFFFFFFFF
    return os.path.join(folder, "definitions", f"{tag:08x}.json")


def _path_finder() -> Any:
    """``importlib.machinery.PathFinder``, taken from ``sys.meta_path`` where the import
    system keeps it: importing ``importlib`` (and its ``warnings``) costs a hook 0.4 ms."""
    for finder in sys.meta_path:
        if getattr(finder, "__qualname__", None) == "PathFinder" and getattr(
            finder, "__module__", None
        ) in ("_frozen_importlib_external", "importlib._bootstrap_external"):
            return finder
    import importlib.machinery  # someone took it out of sys.meta_path

    return importlib.machinery.PathFinder


def _stamp() -> list[Any]:
    """What the cached translations depend on besides the file itself."""
    wcmatch: list[int] | None = None
    spec = _path_finder().find_spec("wcmatch")
    if spec is not None and spec.origin:
        try:
            st = os.stat(spec.origin)
            wcmatch = [st.st_mtime_ns, st.st_size]
        except OSError:
            pass
    return [__version__, f"{sys.version_info[0]}.{sys.version_info[1]}", wcmatch]


def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return None  # the full load reports it properly


def load_definition(config: str, events: Collection[str] | None = None) -> AgentDefinition:
    """The definition in the file ``config``, from the cache when it is current.

    ``events`` (canonical names): build only these events' matchers, so only
    their hooks are imported. A cache miss loads (and validates) the whole file.
    Raises :class:`DefinitionError` as :meth:`AgentDefinition.from_file` does.
    """
    source = os.path.abspath(config)
    folder = cache_dir()
    text = _read_text(config) if folder else None
    stamp = _stamp() if text is not None else None
    if folder and text is not None:
        path = entry_path(source, folder)
        entry = _read_entry(path, source, text, stamp)
        if entry is not None:
            return _build(entry, config, events)
    definition = AgentDefinition.from_file(config)
    if folder and text is not None and _read_text(config) == text:  # unchanged meanwhile
        _store(entry_path(source, folder), definition, source, text, stamp)
    return definition


def _read_entry(path: str, source: str, text: str, stamp: Any) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as fh:
            entry = json.load(fh)
        ok = (
            entry["format"] == _FORMAT
            and entry["stamp"] == stamp
            and entry["config"] == source
            and entry["text"] == text
        )
        if not ok:
            return None
        globs = {(g, bool(p)): list(r) for g, p, r in entry["globs"]}
        if not all(
            isinstance(g, str) and isinstance(r, str) for (g, _), rs in globs.items() for r in rs
        ):
            return None
        GLOB_TRANSLATIONS.update(globs)
        data: dict[str, Any] = entry["definition"]
        return data
    except Exception:  # missing, unreadable, corrupt or another shape: rebuild it
        return None


def _build(data: dict[str, Any], config: str, events: Collection[str] | None) -> AgentDefinition:
    locations = {tuple(loc): line for loc, line in data["locations"]}
    base = os.path.dirname(os.path.realpath(config))  # as the file loader does
    hooks: dict[str, list[Any]] = {}
    for event, matchers in data["hooks"].items():
        if events is not None and event not in events:
            continue
        key = "Stop" if event == "AgentStop" and ("hooks", "Stop") in locations else event
        built = hooks.setdefault(event, [])
        for i, m in enumerate(matchers):
            try:
                built.append(HookMatcher(**m, base_dir=base))
            except DefinitionError as exc:
                raise exc.within("hooks", key, i, file=config, lines=locations) from None
    try:
        return AgentDefinition(
            **{k: data[k] for k in _PLAIN},
            tools={name: ToolSpec(**spec) for name, spec in data["tools"].items()},
            hooks=hooks,
            source=config,
            locations=locations,
        )
    except DefinitionError as exc:
        if exc.file:
            raise
        raise exc.within(file=config, lines=locations) from None


def _data(definition: AgentDefinition) -> dict[str, Any]:
    """The validated definition as plain data that :func:`_build` turns back into it."""
    return {
        **{k: getattr(definition, k) for k in _PLAIN},
        "tools": {
            name: {f: getattr(spec, f) for f in field_names(ToolSpec)}
            for name, spec in definition.tools.items()
        },
        "hooks": {
            event: [
                {f: getattr(m, f) for f in field_names(HookMatcher) if f != "base_dir"}
                for m in matchers
            ]
            for event, matchers in definition.hooks.items()
        },
        "locations": [[list(loc), line] for loc, line in definition.locations.items()],
    }


def _store(path: str, definition: AgentDefinition, source: str, text: str, stamp: Any) -> None:
    data = _data(definition)
    entry = {
        "format": _FORMAT,
        "stamp": stamp,
        "config": source,
        "text": text,
        "definition": data,
        "globs": [[g, p, r] for (g, p), r in GLOB_TRANSLATIONS.items()],
    }
    try:
        dumped = json.dumps(entry, allow_nan=False)
        if json.loads(dumped)["definition"] != data:
            return  # not plain JSON (a date, a tuple, a non-string key): no cache, no harm
    except (TypeError, ValueError):
        return
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(dumped)
        os.replace(tmp, path)  # atomic: a concurrent reader sees the old entry or this one
    except OSError:
        import contextlib  # lazy: a hook process pays for it only when the cache fails

        with contextlib.suppress(OSError):
            os.remove(tmp)
