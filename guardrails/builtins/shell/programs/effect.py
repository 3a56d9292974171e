"""The answer every program handler gives, in one shape the classifier reads."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Final

__all__ = ["ITEM", "Effect", "Handler"]

#: stands for the path ``find -exec``/``fd -x`` substitute into the command they run
ITEM: Final = "\uf8fe"


class Effect:
    """What one program invocation does: kinds, changed paths, and commands it runs.

    ``trees``: directories written into or deleted under without the paths being
    known, ``(mode, dir, names, hidden)`` with mode ``write``/``delete``, ``names``
    the name globs the changed entries match (``None``: any; an archive's members,
    ``find -delete``'s matches) and ``hidden`` whether hidden entries are among
    them (``all``, ``nogit``: all but ``.git``, ``none``). ``item``: for ``find``/``fd``, the start
    directories and name globs of the paths substituted for ``ITEM`` in
    ``nested``, and whether tests filter them (which paths come is then decided at run
    time). ``scripts``: code in the arguments, ``(language, text)`` with
    language ``sh`` (a ``sed 'e cmd'``, a ``git -c alias.x='!cmd'``) or ``ex``
    (a ``vim -c`` command); ``opaque``: why part of what it runs cannot be read
    (``sed 's/x/y/e'``).
    """

    __slots__ = (
        "item", "kinds", "nested", "opaque", "scripts", "sources", "speculate", "targets", "trees",
    )  # fmt: skip

    def __init__(
        self,
        *kinds: str,
        targets: Iterable[str] = (),
        sources: Iterable[str] = (),
        nested: Iterable[list[str]] = (),
    ) -> None:
        self.kinds = set(kinds)
        self.targets = list(targets)
        self.sources = list(sources)
        self.nested = list(nested)
        # rare: shared empty defaults, replaced (never appended to) by the handlers that set them
        self.trees: Sequence[tuple[str, str, tuple[str, ...] | None, str]] = ()
        self.item: tuple[list[str], tuple[str, ...] | None, bool] | None = None
        self.scripts: Sequence[tuple[str, str]] = ()
        self.opaque: Sequence[str] = ()
        #: a verb of a known program the table does not know: its words are read for a
        #: command they may spell, as an unknown program's are
        self.speculate = False


def unread_verb() -> Effect:
    """A verb of a known program the tables do not know (``gio open``, ``cmake --build``):
    unknown, and its words read for a command they may spell."""
    found = Effect("unknown")
    found.speculate = True
    return found


Handler = Callable[[list[str]], Effect]
