"""Bounds on the files a definition is read from (the definition, and schema files it names).

A definition is a few kilobytes written by hand. Without bounds, a file nested
thousands of levels deep stops the parsers with a ``RecursionError`` (a
traceback of thousands of lines), and YAML aliases that nest (the "billion
laughs") turn a small file into billions of values as soon as something walks
it (the models, the compiled-definition cache), and an alias used inside its
own anchor makes a structure that contains itself. Each bound is checked before
that can happen and ends in one :class:`~guardrails.DefinitionError` naming the
limit; the callers add the file.

Light on purpose (no PyYAML at import): schema files are read in hook processes.
"""

from __future__ import annotations

from ..errors import DefinitionError

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any

__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_NODES", "check_depth", "read_bytes", "yaml_document"]

#: a definition or schema file bigger than this is refused unread (8 MiB)
MAX_BYTES = 8 * 1024 * 1024
#: mappings and lists nested deeper than this are refused (aliases expanded)
MAX_DEPTH = 100
#: a YAML document whose aliases expand to more values than this is refused
MAX_NODES = 500_000


def read_bytes(path: str) -> bytes:
    """The file's bytes; ``DefinitionError`` when it is over :data:`MAX_BYTES`. Reads at
    most one byte more than that, so a device or a pipe (``/dev/zero``) ends too."""
    with open(path, "rb") as fh:
        data = fh.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise DefinitionError(
            f"the file is larger than {MAX_BYTES // (1024 * 1024)} MiB, the limit for a "
            "definition or schema file"
        )
    return data


def too_deep(line: int | None = None) -> DefinitionError:
    return DefinitionError(
        f"nested deeper than {MAX_DEPTH} levels, the limit for a definition or schema file",
        line=line,
    )


def check_depth(data: Any) -> None:
    """Raise :func:`too_deep` when ``data`` (parsed JSON or TOML: a tree) nests mappings and
    lists deeper than :data:`MAX_DEPTH`. Iterative: it runs where recursion could not."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth >= MAX_DEPTH:
            raise too_deep()
        stack.extend((child, depth + 1) for child in children)


def yaml_document(text: str) -> tuple[Any, Any]:
    """``(loader, root node or None)`` for the single YAML document in ``text``, within the
    bounds: depth while composing, then aliases (expansion, recursion) on the node graph.

    The caller constructs the document (``loader.construct_document(root)``) and
    disposes of the loader. Raises ``yaml.YAMLError`` for YAML that does not parse and
    ``DefinitionError`` (with its line) for a bound.
    """
    import yaml

    class _Loader(yaml.SafeLoader):
        """Counts nesting as it composes, before PyYAML's recursion could overflow."""

        depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.depth >= MAX_DEPTH and self.check_event(
                yaml.SequenceStartEvent, yaml.MappingStartEvent
            ):
                start = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise too_deep(start.line + 1)
            self.depth += 1
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        if root is not None:
            _check_aliases(root)
    except BaseException:
        loader.dispose()
        raise
    return loader, root


def _check_aliases(root: Any) -> None:
    """Walk the node graph once per node (aliases share nodes): the document's size and depth
    as if every alias were written out, and no alias inside its own anchor."""
    import yaml

    sizes: dict[int, tuple[int, int]] = {}  # id(node) -> (values, depth) once expanded
    open_: set[int] = set()

    def walk(node: Any, depth: int) -> tuple[int, int]:
        key = id(node)
        known = sizes.get(key)
        if known is not None:
            if depth + known[1] > MAX_DEPTH:
                raise too_deep(node.start_mark.line + 1)
            return known
        if key in open_:
            raise DefinitionError(
                "a YAML alias is used inside its own anchor: the document would contain "
                "itself (a definition must be a tree)",
                line=node.start_mark.line + 1,
            )
        if depth >= MAX_DEPTH and isinstance(node, yaml.CollectionNode):
            raise too_deep(node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            children = []
        open_.add(key)
        count, deepest = 1, 0
        for child in children:
            n, d = walk(child, depth + 1)
            count += n
            deepest = max(deepest, d + 1)
            if count > MAX_NODES:
                raise DefinitionError(
                    f"YAML aliases here expand to more than {MAX_NODES:,} values, the limit "
                    "for a definition or schema file (aliases nested in aliases: a "
                    '"billion laughs")',
                    line=node.start_mark.line + 1,
                )
        open_.discard(key)
        sizes[key] = (count, deepest)
        return count, deepest

    walk(root, 0)
