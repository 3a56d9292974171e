"""The answer every program handler gives, in one shape the classifier reads."""

from __future__ import annotations

from collections.abc import Callable, Iterable

__all__ = ["Effect", "Handler"]


class Effect:
    """What one program invocation does: kinds, changed paths, and commands it runs."""

    __slots__ = ("kinds", "nested", "sources", "targets")

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


Handler = Callable[[list[str]], Effect]
