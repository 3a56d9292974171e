"""Read-only tool inputs and sealed events: what a hook sees, it cannot change.

A hook that edits ``event.tool_input["command"]`` in place after an earlier hook
judged it would make the tool run something nobody judged. So before the first
hook runs, the dispatcher freezes the event's input and output (a deep
read-only copy: ``FrozenDict`` and ``FrozenList`` are ``dict`` and ``list``, so
``isinstance``, ``json.dumps`` and jsonschema treat them as before) and seals
the event (its attributes cannot be reassigned). The only way to change what
runs is ``HookResult.modify(input=...)``, which the rest of the chain judges.

``copy.deepcopy`` and ``thaw`` give a plain, mutable copy back: a tool receives
one, so a tool that edits its own arguments still can.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any, NoReturn

__all__ = ["FrozenDict", "FrozenList", "freeze", "is_sealed", "seal", "thaw", "unsealed_copy"]

_ADVICE = "hooks cannot change what they judge; return HookResult.modify(input=...) instead"


def _refuse(*_: object, **__: object) -> NoReturn:
    raise TypeError(f"read-only tool input: {_ADVICE}")


class FrozenDict(dict):  # type: ignore[type-arg]
    """A ``dict`` that refuses every change."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __copy__(self) -> dict[Any, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        return thaw(self)  # type: ignore[no-any-return]

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (thaw(self),))


class FrozenList(list):  # type: ignore[type-arg]
    """A ``list`` that refuses every change."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return thaw(self)  # type: ignore[no-any-return]

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (thaw(self),))


#: values that are immutable already: nothing to copy
_SCALARS = frozenset({str, int, float, bool, type(None), bytes})


def freeze(value: Any) -> Any:
    """``value`` with every dict and list (at any depth) read-only; a frozen value as is."""
    t = type(value)
    if t is FrozenDict or t is FrozenList or t in _SCALARS:
        return value
    if isinstance(value, dict):
        for v in value.values():
            if type(v) not in _SCALARS:
                return FrozenDict({k: freeze(v) for k, v in value.items()})
        return FrozenDict(value)  # flat: one copy in C
    if isinstance(value, list):
        for v in value:
            if type(v) not in _SCALARS:
                return FrozenList([freeze(v) for v in value])
        return FrozenList(value)
    if t is tuple:
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """A plain, mutable deep copy of a frozen value (dicts and lists at any depth)."""
    if isinstance(value, dict):
        for v in value.values():
            if type(v) not in _SCALARS:
                return {k: thaw(v) for k, v in value.items()}
        return dict(value)
    if isinstance(value, list):
        return [thaw(v) for v in value]
    if type(value) is tuple:
        return tuple(thaw(v) for v in value)
    return value


# --- sealed events -------------------------------------------------------------------------

_SEALED: dict[type, type] = {}


def _sealed_class(cls: type) -> type:
    """``cls`` with its attributes read-only: the same slots, so ``__class__`` can switch."""
    sealed = _SEALED.get(cls)
    if sealed is not None:
        return sealed
    from ._dataclass_free import compared_fields

    compare = compared_fields(cls)

    def refuse(self: object, name: str, value: object = None) -> NoReturn:
        raise AttributeError(f"the event is read-only ({name}): {_ADVICE}")

    def replace(self: Any, **changes: Any) -> Any:
        """A sealed copy with ``changes`` (how the Merge carries a rewrite on)."""
        return seal(cls.replace(self, **changes))  # type: ignore[attr-defined]

    def eq(self: Any, other: object) -> Any:
        if isinstance(other, cls):  # sealed or not: the same event
            return all(getattr(self, n) == getattr(other, n) for n in compare)
        return NotImplemented

    def reduce(self: Any) -> tuple[Any, ...]:
        return (seal, (cls.replace(self),))  # type: ignore[attr-defined]

    sealed = type(
        cls.__name__,
        (cls,),
        {
            "__slots__": (),
            "__module__": cls.__module__,
            "__qualname__": cls.__qualname__,
            "__doc__": cls.__doc__,
            "__setattr__": refuse,
            "__delattr__": refuse,
            "__eq__": eq,
            "__hash__": cls.__hash__,
            "__reduce__": reduce,
            "replace": replace,
            "_unsealed": cls,
        },
    )
    _SEALED[cls] = sealed
    return sealed


def seal(event: Any) -> Any:
    """Make ``event``'s attributes read-only from now on (in place: the same object)."""
    cls = type(event)
    if "_unsealed" not in cls.__dict__:
        event.__class__ = _SEALED.get(cls) or _sealed_class(cls)
    return event


def is_sealed(event: Any) -> bool:
    return "_unsealed" in type(event).__dict__


def unsealed_copy(event: Any) -> Any:
    """A mutable copy of a sealed event (for code that fills in fields afterwards)."""
    cls = type(event).__dict__.get("_unsealed")
    return event if cls is None else cls.replace(event)
