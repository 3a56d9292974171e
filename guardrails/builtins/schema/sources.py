"""Where a tool's JSON Schema comes from, resolved once per tool and definition.

From ``ToolSpec.schema``:

* a mapping: the JSON Schema itself, inline;
* an MCP tool, ``{name: ..., inputSchema: {...}}`` (or just ``{inputSchema: ...}``;
  the Anthropic API's ``input_schema`` is accepted too): its input schema;
* a string: a ``.json``/``.yaml`` file, relative to the definition file (or
  the working directory for a definition built in Python); a path under
  ``schemas/`` that is not there falls back to the schemas shipped with
  hookrails (``schemas/tools/Bash.json``); ``package.module:Model`` imports a
  pydantic model;
* a pydantic model class (or ``TypeAdapter``): its ``model_json_schema()``;
* nothing: the built-in schema of the Claude Code tool of the same name
  (``schemas/tools/<Tool>.json``), if there is one.
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path
from typing import Any

from ...definition.limits import check_depth, read_bytes, too_deep, yaml_document
from ...errors import DefinitionError

__all__ = ["builtin_schema", "builtin_tool_names", "resolve_schema"]

_IMPORT_REF = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*\Z")


# --- built-in schemas ------------------------------------------------------------------


@functools.cache
def _builtin_index() -> dict[str, Path]:
    from ..._package_data import data_path

    return {p.stem: p for p in sorted((data_path("schemas") / "tools").glob("*.json"))}


@functools.cache
def _load_builtin(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def builtin_tool_names() -> list[str]:
    """Claude Code tools with a schema shipped in ``schemas/tools``."""
    return list(_builtin_index())


def builtin_schema(tool: str) -> dict[str, Any] | None:
    """The shipped schema of Claude Code's ``tool`` (shared: do not modify), or ``None``."""
    path = _builtin_index().get(tool)
    return None if path is None else _load_builtin(path)


# --- resolving a declared schema -------------------------------------------------------


def resolve_schema(declared: Any, *, tool: str, source: str | None = None) -> Any:
    """The JSON Schema (a dict or a boolean) ``declared`` for ``tool``, or ``None``.

    ``source`` is the definition file; relative paths resolve against its folder.
    Raises :class:`DefinitionError` (located at ``tools.<tool>.schema``) for a
    missing or unreadable file or a value that is no kind of schema.
    """
    if declared is None:
        return builtin_schema(tool)
    loc: tuple[str | int, ...] = ("tools", tool, "schema")
    value = declared
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str):
        value = _load_ref(value, source, loc)
    value = _from_model(value)
    if isinstance(value, dict):
        for key in ("inputSchema", "input_schema"):  # an MCP / Anthropic API tool description
            if isinstance(value.get(key), dict | bool):
                value = value[key]
                break
    if not isinstance(value, dict | bool):
        raise DefinitionError(
            f"the schema must be a JSON Schema, got {type(value).__name__}",
            file=source,
            loc=loc,
            expected="a mapping, a file path, a pydantic model or an MCP tool with inputSchema",
        )
    return value


def _from_model(value: Any) -> Any:
    dump = getattr(value, "model_json_schema", None)
    if isinstance(value, type) and callable(dump):
        return dump()
    if not isinstance(value, dict | list | str | bool | int | float | type(None)):
        dump = getattr(value, "json_schema", None)  # pydantic.TypeAdapter
        if callable(dump):
            return dump()
    return value


def _load_ref(ref: str, source: str | None, loc: tuple[str | int, ...]) -> Any:
    base = os.path.dirname(os.path.abspath(source)) if source else os.getcwd()
    path = Path(base, ref)
    if _IMPORT_REF.match(ref) and not path.exists():
        return _import_model(ref, base, source, loc)
    if not path.is_file():
        packaged = _packaged(ref)
        if packaged is None:
            raise DefinitionError(
                f"schema file {ref!r} not found (looked for {path})", file=source, loc=loc
            )
        path = packaged
    try:
        text = read_bytes(str(path)).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DefinitionError(
            f"cannot read schema file {path}: {exc}", file=source, loc=loc
        ) from None
    except DefinitionError as exc:  # the bounds of definition/limits.py
        raise _bound(exc, path, source, loc) from None
    if path.suffix.lower() in (".yaml", ".yml"):
        return _load_yaml(text, path, source, loc)
    try:
        data = json.loads(text)
        check_depth(data)
    except json.JSONDecodeError as exc:
        raise DefinitionError(
            f"schema file {path} is not valid JSON: {exc}", file=source, loc=loc
        ) from None
    except RecursionError:
        raise _bound(too_deep(), path, source, loc) from None
    except DefinitionError as exc:
        raise _bound(exc, path, source, loc) from None
    return data


def _load_yaml(text: str, path: Path, source: str | None, loc: tuple[str | int, ...]) -> Any:
    import yaml

    try:
        loader, root = yaml_document(text)
    except DefinitionError as exc:
        raise _bound(exc, path, source, loc) from None
    except yaml.YAMLError as exc:
        why = " ".join(str(exc).split())
        raise DefinitionError(
            f"schema file {path} is not valid YAML: {why}", file=source, loc=loc
        ) from None
    try:
        return None if root is None else loader.construct_document(root)
    except yaml.YAMLError as exc:
        why = " ".join(str(exc).split())
        raise DefinitionError(
            f"schema file {path} is not valid YAML: {why}", file=source, loc=loc
        ) from None
    finally:
        loader.dispose()


def _bound(
    exc: DefinitionError, path: Path, source: str | None, loc: tuple[str | int, ...]
) -> DefinitionError:
    """A bound of the schema file, said at the definition's ``tools.<tool>.schema``."""
    at = f" (line {exc.line})" if exc.line else ""
    return DefinitionError(f"schema file {path}{at}: {exc.message}", file=source, loc=loc)


def _packaged(ref: str) -> Path | None:
    """``schemas/tools/Bash.json`` read from the schemas shipped with hookrails."""
    parts = Path(ref).parts
    if len(parts) < 2 or parts[0] != "schemas" or ".." in parts:
        return None
    from ..._package_data import data_path

    candidate = data_path("schemas").joinpath(*parts[1:])
    return candidate if candidate.is_file() else None


def _import_model(ref: str, base: str, source: str | None, loc: tuple[str | int, ...]) -> Any:
    from ...definition.hook_refs import import_from_folder

    module_name, _, attr = ref.partition(":")
    try:
        obj: Any = import_from_folder(module_name, base)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (Exception, SystemExit) as exc:  # any failure to import is a bad reference
        why = " ".join(str(exc).split()) or type(exc).__name__
        if isinstance(exc, SystemExit):  # it must not end a check, a hook process or a host
            why = f"importing it raised SystemExit({exc.code!r})"
        raise DefinitionError(
            f"cannot import schema {ref!r}: {why}",
            file=source,
            loc=loc,
            expected="'package.module:Model' naming a pydantic model",
        ) from None
    return obj
