"""Dataclasses without ``dataclasses`` on the hot path.

``@dataclass`` costs a hook process about 15 ms: importing ``dataclasses``
(which imports ``inspect``, ``ast`` and ``dis``) and compiling every generated
method at import time. The event, result and definition classes therefore
write their ``__init__`` by hand and :func:`record` adds the rest as the
decorator would: ``__repr__``, ``__eq__``, ``__hash__ = None``,
``__match_args__``, class-level defaults (without ``slots``). The fields are
the class annotations that are not ``ClassVar``, in order; :func:`record`
checks them against ``__init__`` (and ``__slots__``) when the class is made.

``dataclasses.fields``, ``replace``, ``asdict`` and ``is_dataclass`` still work:
``__dataclass_fields__`` and ``__dataclass_params__`` come from a real
dataclass twin, built on first access. Modules using this need
``from __future__ import annotations`` (annotations are read as strings).
"""

from __future__ import annotations

import _thread

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    T = TypeVar("T", bound=type)

__all__ = [
    "DICT",
    "LIST",
    "Factory",
    "compared_fields",
    "field_annotations",
    "field_names",
    "named_tuple",
    "record",
]


class Factory:
    """An ``__init__`` default meaning "call ``factory``" (``field(default_factory=...)``)."""

    __slots__ = ("factory",)

    def __init__(self, factory: Callable[[], Any]) -> None:
        self.factory = factory

    def __repr__(self) -> str:
        return "<factory>"  # what inspect.signature shows for a dataclass default_factory


#: ``field(default_factory=dict)`` / ``list``: ``x = {} if x is DICT else x`` in ``__init__``
DICT: Any = Factory(dict)
LIST: Any = Factory(list)

_SPEC = "_record_spec"


class _Spec:
    """What :func:`record` learnt about one class."""

    __slots__ = ("compare", "frozen", "kw_only", "names", "own", "repr", "slots")

    def __init__(
        self,
        base: _Spec | None,
        own: tuple[str, ...],
        *,
        kw_only: bool,
        slots: bool,
        frozen: bool,
        no_repr: tuple[str, ...],
        no_compare: tuple[str, ...],
    ) -> None:
        inherited: tuple[tuple[str, ...], ...] = (
            (base.names, base.repr, base.compare) if base else ((), (), ())
        )
        self.names: tuple[str, ...] = inherited[0] + own
        self.own = own
        self.kw_only = kw_only
        self.slots = slots
        self.frozen = frozen
        #: a field's repr and compare flags stay as its own class declared them
        self.repr: tuple[str, ...] = inherited[1] + tuple(n for n in own if n not in no_repr)
        self.compare: tuple[str, ...] = inherited[2] + tuple(n for n in own if n not in no_compare)


def record(
    *,
    kw_only: bool = False,
    slots: bool = False,
    frozen: bool = False,
    no_repr: tuple[str, ...] = (),
    no_compare: tuple[str, ...] = (),
) -> Callable[[T], T]:
    """Finish a hand-written dataclass: ``@dataclass(kw_only=..., slots=..., frozen=...)``
    with ``field(repr=False)`` for ``no_repr`` and ``field(compare=False)`` for
    ``no_compare``. A frozen class's ``__init__`` sets fields with ``object.__setattr__``."""

    def wrap(cls: T) -> T:
        base = _spec_of(cls.__mro__[1])
        own = tuple(n for n, ann in _own_annotations(cls).items() if not _is_classvar(ann))
        if base is not None and (
            base.kw_only != kw_only or base.frozen != frozen or set(own) & set(base.names)
        ):
            raise TypeError(f"{cls.__qualname__}: redeclared fields, or mixed kw_only or frozen")
        spec = _Spec(
            base,
            own,
            kw_only=kw_only,
            slots=slots,
            frozen=frozen,
            no_repr=no_repr,
            no_compare=no_compare,
        )
        names = spec.names
        _check(cls, names, own, kw_only=kw_only, slots=slots)
        init = cls.__dict__.get("__init__")
        if init is not None and init.__annotations__.get("return") == "None":
            init.__annotations__["return"] = None  # as a generated __init__ has it
        setattr(cls, _SPEC, spec)
        if not slots:  # a plain dataclass keeps its defaults as class attributes
            for name, default in _defaults(cls).items():
                if name in own and not isinstance(default, Factory):
                    setattr(cls, name, default)
        methods: list[tuple[str, Any]] = [("__repr__", _repr), ("__eq__", _eq)]
        if frozen:
            methods += [("__setattr__", _frozen_setattr), ("__delattr__", _frozen_delattr)]
        for attr, value in methods:
            if attr not in cls.__dict__:
                setattr(cls, attr, value)
        if cls.__dict__.get("__hash__") is None:  # eq: unhashable, or by fields when frozen
            setattr(cls, "__hash__", _hash if frozen else None)  # noqa: B010
        if "__match_args__" not in cls.__dict__:
            setattr(cls, "__match_args__", () if kw_only else names)  # noqa: B010
        setattr(cls, "__dataclass_fields__", _TWIN_FIELDS)  # noqa: B010
        setattr(cls, "__dataclass_params__", _TWIN_PARAMS)  # noqa: B010
        return cls

    return wrap


def field_names(cls: type) -> tuple[str, ...]:
    """The fields of a :func:`record` class (or its subclass), in order."""
    spec = _spec_of(cls)
    if spec is None:
        raise TypeError(f"{cls.__name__} is not a record class")
    return spec.names


def compared_fields(cls: type) -> tuple[str, ...]:
    """The fields ``==`` compares on a :func:`record` class (or its subclass)."""
    spec = _spec_of(cls)
    if spec is None:
        raise TypeError(f"{cls.__name__} is not a record class")
    return spec.compare


def named_tuple(
    name: str,
    annotations: dict[str, str],
    *,
    defaults: tuple[Any, ...] = (),
    module: str,
    doc: str,
) -> Any:
    """``class name(typing.NamedTuple)`` with these field annotations (as text), without
    importing ``typing``. Declare the class under ``TYPE_CHECKING`` for type checkers."""
    from collections import namedtuple  # loaded already: ``re`` needs it

    factory: Any = namedtuple  # called with names only known at run time
    made: Any = factory(name, list(annotations), defaults=defaults, module=module)
    made.__annotations__ = made.__new__.__annotations__ = dict(annotations)
    made.__doc__ = doc
    return made


def field_annotations(cls: type) -> dict[str, str]:
    """Field name -> its annotation as written, for every field of a :func:`record` class."""
    merged: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        merged.update(_own_annotations(klass))
    return {name: merged[name] for name in field_names(cls)}


def _own_annotations(cls: type) -> dict[str, Any]:
    """The annotations written in ``cls`` itself (``inspect.get_annotations`` without
    importing ``inspect``)."""
    found: dict[str, Any] = cls.__dict__.get("__annotations__", {})  # noqa: RUF063
    return found


def _spec_of(cls: type) -> _Spec | None:
    spec: _Spec | None = getattr(cls, _SPEC, None)
    return spec


def _is_classvar(annotation: object) -> bool:
    if not isinstance(annotation, str):
        raise TypeError("record classes need `from __future__ import annotations`")
    return annotation.startswith(("ClassVar", "typing.ClassVar"))


def _check(
    cls: type, names: tuple[str, ...], own: tuple[str, ...], *, kw_only: bool, slots: bool
) -> None:
    """The hand-written ``__init__`` (and ``__slots__``) must list exactly the fields."""
    code = cls.__init__.__code__  # type: ignore[misc]
    positional = code.co_argcount - 1
    params = code.co_varnames[1 : 1 + positional + code.co_kwonlyargcount]
    if params != names or (kw_only and positional) or (not kw_only and code.co_kwonlyargcount):
        raise TypeError(
            f"{cls.__qualname__}.__init__ parameters {params} are not the fields {names}"
        )
    if slots and tuple(cls.__dict__.get("__slots__", ())) != own:
        raise TypeError(f"{cls.__qualname__}.__slots__ is not its own fields {own}")


def _defaults(cls: type) -> dict[str, Any]:
    """Field name -> ``__init__`` default (a :class:`Factory` for a ``default_factory``)."""
    init: Any = cls.__init__  # type: ignore[misc]
    code = init.__code__
    out: dict[str, Any] = dict(init.__kwdefaults__ or {})
    positional = code.co_varnames[1 : code.co_argcount]
    given = init.__defaults__ or ()
    out.update(zip(positional[len(positional) - len(given) :], given, strict=True))
    return out


_running: set[tuple[int, int]] = set()


def _repr(self: Any) -> str:
    """``Name(field=value, ...)``, ``...`` for an object inside its own repr."""
    key = id(self), _thread.get_ident()
    if key in _running:
        return "..."
    _running.add(key)
    try:
        names = getattr(type(self), _SPEC).repr
        body = ", ".join(f"{n}={getattr(self, n)!r}" for n in names)
        return f"{self.__class__.__qualname__}({body})"
    finally:
        _running.discard(key)


def _eq(self: Any, other: object) -> object:
    """As a dataclass compares: same class, then the compared fields as tuples."""
    if other.__class__ is self.__class__:
        names = getattr(type(self), _SPEC).compare
        return tuple(getattr(self, n) for n in names) == tuple(getattr(other, n) for n in names)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(tuple(getattr(self, n) for n in getattr(type(self), _SPEC).compare))


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    spec: _Spec = getattr(type(self), _SPEC)
    if _SPEC in type(self).__dict__ or name in spec.names:
        import dataclasses

        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _frozen_delattr(self: Any, name: str) -> None:
    spec: _Spec = getattr(type(self), _SPEC)
    if _SPEC in type(self).__dict__ or name in spec.names:
        import dataclasses

        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
    object.__delattr__(self, name)


class _TwinAttr:
    """``__dataclass_fields__`` / ``__dataclass_params__``, read from the dataclass twin."""

    __slots__ = ("attr",)

    def __init__(self, attr: str) -> None:
        self.attr = attr

    def __get__(self, obj: object, owner: type) -> Any:
        return getattr(_twin(owner), self.attr)


_TWIN_FIELDS = _TwinAttr("__dataclass_fields__")
_TWIN_PARAMS = _TwinAttr("__dataclass_params__")
_TWINS: dict[type, type] = {}


def _twin(cls: type) -> type:
    """A real dataclass declaring the same fields as the record ``cls`` (or the nearest
    record class above it), so ``dataclasses`` sees the very same ``Field`` objects."""
    owner = next(c for c in cls.__mro__ if _SPEC in c.__dict__)
    twin = _TWINS.get(owner)
    if twin is not None:
        return twin
    import dataclasses
    import typing

    spec: _Spec = owner.__dict__[_SPEC]
    defaults = _defaults(owner)
    annotations = _own_annotations(owner)
    ns: dict[str, Any] = {"__module__": owner.__module__, "__qualname__": owner.__qualname__}
    hints: dict[str, Any] = {}
    for name, ann in annotations.items():
        if _is_classvar(ann):
            hints[name] = typing.ClassVar
            if hasattr(owner, name):
                ns[name] = getattr(owner, name)
        elif name in spec.own:
            hints[name] = object
            options: dict[str, Any] = {"repr": name in spec.repr, "compare": name in spec.compare}
            default = defaults.get(name, dataclasses.MISSING)
            if isinstance(default, Factory):
                options["default_factory"] = default.factory
            else:
                options["default"] = default
            ns[name] = dataclasses.field(**options)
    ns["__annotations__"] = hints
    bases = tuple(_twin(b) for b in owner.__bases__ if _spec_of(b) is not None)
    made: type = dataclasses.dataclass(kw_only=spec.kw_only, slots=spec.slots, frozen=spec.frozen)(
        type(owner.__name__, bases, ns)
    )
    fields: dict[str, Any] = getattr(made, "__dataclass_fields__")  # noqa: B009
    for name, ann in annotations.items():
        if name in fields and (name in spec.own or _is_classvar(ann)):
            fields[name].type = ann  # the annotation as written, as a dataclass keeps it
    _TWINS[owner] = made
    return made
