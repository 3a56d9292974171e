"""Local ``$ref`` resolution and ``allOf`` merging: a schema node's effective keywords.

The example builder, the fast path, the denial wording and the schema summaries
all need them: pydantic puts every nested model behind a ``$ref``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_DEPTH", "ExampleError", "Schemas", "merge"]

#: deepest nesting (and ``$ref`` hops) the builder follows before giving up
MAX_DEPTH = 32

#: the order types are listed in a merged ``type`` (and tried by the example builder)
_ORDER = ("object", "array", "string", "integer", "number", "boolean")


class ExampleError(ValueError):
    """No input valid against the schema could be built."""


class Schemas:
    """Walks one schema document: resolves local ``$ref`` and folds ``allOf``.

    Shared by the example builder and the schema summaries, which both need a
    node's effective keywords (pydantic puts every nested model behind a ``$ref``).
    """

    def __init__(self, root: Any) -> None:
        self.root = root
        self._anchors: dict[str, Any] | None = None

    def resolve(self, ref: str) -> Any:
        if ref == "#" or ref == "":
            return self.root
        if ref.startswith("#/"):
            node = self.root
            for raw in ref[2:].split("/"):
                from urllib.parse import unquote

                part = unquote(raw).replace("~1", "/").replace("~0", "~")
                if isinstance(node, list):
                    try:
                        node = node[int(part)]
                    except (ValueError, IndexError):
                        raise ExampleError(f"$ref {ref!r} does not resolve") from None
                elif isinstance(node, dict) and part in node:
                    node = node[part]
                else:
                    raise ExampleError(f"$ref {ref!r} does not resolve")
            return node
        if ref.startswith("#"):
            found = self.anchors().get(ref[1:])
            if found is not None:
                return found
        raise ExampleError(f"$ref {ref!r} is not a local reference")

    def anchors(self) -> dict[str, Any]:
        if self._anchors is None:
            found: dict[str, Any] = {}

            def walk(node: Any) -> None:
                if isinstance(node, dict):
                    for key in ("$anchor", "$dynamicAnchor"):
                        if isinstance(node.get(key), str):
                            found.setdefault(node[key], node)
                    for value in node.values():
                        walk(value)
                elif isinstance(node, list):
                    for value in node:
                        walk(value)

            walk(self.root)
            self._anchors = found
        return self._anchors

    def flatten(self, node: Any) -> Any:
        """``node`` with ``$ref`` replaced by its target and ``allOf`` merged in."""
        for _ in range(MAX_DEPTH):
            if not isinstance(node, dict):
                return node
            if "$ref" in node or "$dynamicRef" in node:
                key = "$ref" if "$ref" in node else "$dynamicRef"
                ref = node[key]
                target = self.resolve(ref) if isinstance(ref, str) else True
                rest = {k: v for k, v in node.items() if k != key}
                if not rest:
                    node = target
                    continue
                if target is False:
                    return False
                node = merge(rest, target) if isinstance(target, dict) else rest
                continue
            if "allOf" in node:
                out = {k: v for k, v in node.items() if k != "allOf"}
                for part in node["allOf"]:
                    part = self.flatten(part)
                    if part is False:
                        return False
                    if isinstance(part, dict):
                        out = merge(out, part)
                node = out
                continue
            return node
        raise ExampleError("the schema refers to itself too deeply ($ref loop)")


_LOWER_BOUNDS = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
_UPPER_BOUNDS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SUBSCHEMAS = ("items", "additionalProperties", "contains", "propertyNames", "not")


def _types(value: Any) -> set[str]:
    return {value} if isinstance(value, str) else set(value)


def merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Both schemas' constraints in one node (an approximation of ``allOf: [a, b]``).

    Conflicts that cannot be expressed in one node keep ``a``'s keyword: the
    final validation against the whole schema still catches them.
    """
    out = dict(a)
    for key, value in b.items():
        if key not in out:
            out[key] = value
            continue
        cur = out[key]
        if key in _MAPS and isinstance(cur, dict) and isinstance(value, dict):
            both = dict(cur)
            for name, sub in value.items():
                both[name] = {"allOf": [both[name], sub]} if name in both else sub
            out[key] = both
        elif key == "required" and isinstance(cur, list) and isinstance(value, list):
            out[key] = list(dict.fromkeys([*cur, *value]))
        elif key == "type":
            left, right = _types(cur), _types(value)
            common = left & right
            if "integer" in left and "number" in right:
                common.add("integer")
            if "number" in left and "integer" in right:
                common.add("integer")
            out[key] = [t for t in ("null", *_ORDER) if t in common]
        elif key in _LOWER_BOUNDS and _is_num(cur) and _is_num(value):
            out[key] = max(cur, value)
        elif key in _UPPER_BOUNDS and _is_num(cur) and _is_num(value):
            out[key] = min(cur, value)
        elif key == "enum" and isinstance(cur, list) and isinstance(value, list):
            out[key] = [x for x in cur if any(_same(x, y) for y in value)]
        elif key in _SUBSCHEMAS and isinstance(cur, dict) and isinstance(value, dict):
            out[key] = {"allOf": [cur, value]}
        elif key in _SUBSCHEMAS and (cur is False or value is False):
            out[key] = False
        elif key == "uniqueItems":
            out[key] = bool(cur) or bool(value)
    return out


def _is_num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _same(x: Any, y: Any) -> bool:
    """JSON equality: ``True`` is not ``1``."""
    if isinstance(x, bool) or isinstance(y, bool):
        return isinstance(x, bool) and isinstance(y, bool) and x == y
    return bool(x == y)
