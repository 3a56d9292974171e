"""Words as bash would expand them: braces, variables the line sets, substitutions.

``Expander`` turns a word's shape into its possible values (alternatives, each
a list of fields after word splitting): ``{rm,-rf,/}`` is three words,
``x=rm; $x`` is ``rm``, ``for d in a b`` gives ``$d`` two values,
``$(echo .env)`` is ``.env``, ``$(mktemp -d)`` a fresh temporary directory.
What cannot be known becomes a hole (``values``). Variables are tracked
flow-insensitively: every value a name is given anywhere before the use counts.
"""

from __future__ import annotations

import itertools
import posixpath
import re
import shlex
from typing import TYPE_CHECKING, Final

from .options import word_set
from .syntax import Seg, Shape, SimpleCommand
from .values import Hole, Holes, Output, has_hole

__all__ = ["Expander"]

_MAX_ALTS: Final = 32  # alternative expansions of one command
_MAX_VALUES: Final = 24  # values one variable may hold before it counts as unknown
_MAX_BRACES: Final = 256
_PARAM_RE: Final = re.compile(
    r"(#?)(!?)([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!0-])(\[[^\]]*\])?(.*)", re.S
)
_SEQ_RE: Final = re.compile(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?")
_ARITH_OK: Final = re.compile(r"[\d\s+\-*/%()]*")
_TOKENS: Final = word_set(
    """$ ! ? # - RANDOM SRANDOM SECONDS LINENO BASHPID PPID UID EUID EPOCHSECONDS
    EPOCHREALTIME HOSTNAME"""
)
_IFS: Final = " \t\n"

#: a partial expansion: (finished fields, the field being built, whether it exists yet)
_State = tuple[tuple[str, ...], str, bool]


def _braces(shape: Shape) -> list[Shape]:
    """Bash brace expansion over the unquoted literal parts of a word."""
    if not any(seg[0] == "lit" and not seg[2] and "{" in seg[1] for seg in shape):
        return [shape]
    items: list[str | Seg] = []
    for seg in shape:
        if seg[0] == "lit" and not seg[2]:
            items.extend(seg[1])
        else:
            items.append(seg)
    out: list[Shape] = []
    for result in _expand_items(items, 0):
        segs: list[Seg] = []
        chars: list[str] = []
        for item in result:
            if isinstance(item, str):
                chars.append(item)
                continue
            if chars:
                segs.append(("lit", "".join(chars), False, None))
                chars = []
            segs.append(item)
        if chars:
            segs.append(("lit", "".join(chars), False, None))
        out.append(tuple(segs))
    return out or [shape]


def _expand_items(items: list[str | Seg], depth: int) -> list[list[str | Seg]]:
    if depth > 8:
        return [items]
    for start, item in enumerate(items):
        if item != "{":
            continue
        level, commas, end = 0, [], -1
        for j in range(start + 1, len(items)):
            it = items[j]
            if it == "{":
                level += 1
            elif it == "}":
                if level == 0:
                    end = j
                    break
                level -= 1
            elif it == "," and level == 0:
                commas.append(j)
        if end < 0:
            return [items]
        body = items[start + 1 : end]
        if commas:
            bounds = [start, *commas, end]
            alts = [items[bounds[k] + 1 : bounds[k + 1]] for k in range(len(bounds) - 1)]
        else:
            seq = _sequence(body)
            if seq is None:
                continue
            alts = seq
        prefix, suffix = items[:start], items[end + 1 :]
        results: list[list[str | Seg]] = []
        for alt in alts:
            for r in _expand_items([*prefix, *alt, *suffix], depth + 1):
                results.append(r)
                if len(results) >= _MAX_BRACES:
                    return results
        return results
    return [items]


def _sequence(body: list[str | Seg]) -> list[list[str | Seg]] | None:
    if not all(isinstance(c, str) for c in body):
        return None
    m = _SEQ_RE.fullmatch("".join(str(c) for c in body))
    if m is None:
        return None
    a, b, step = m.group(1), m.group(2), abs(int(m.group(3) or 1)) or 1
    if a.lstrip("-").isdigit() and b.lstrip("-").isdigit():
        lo, hi = int(a), int(b)
        rng = range(lo, hi + 1, step) if lo <= hi else range(lo, hi - 1, -step)
        return [list(str(v)) for v in itertools.islice(rng, _MAX_BRACES)]
    if a.isalpha() and b.isalpha():
        lo, hi = ord(a), ord(b)
        rng = range(lo, hi + 1, step) if lo <= hi else range(lo, hi - 1, -step)
        return [[chr(v)] for v in itertools.islice(rng, _MAX_BRACES)]
    return None


def _add_split(state: _State, value: str, ifs: str) -> list[_State]:
    """Append an unquoted expansion's value: split at ``IFS`` characters, empty parts vanish."""
    fields, cur, has = state
    if not value:
        return [state]
    if ifs == _IFS:
        pieces = value.split()
    else:
        pieces = [p for p in re.split("[" + re.escape(ifs) + "]", value) if p] if ifs else [value]
    if not pieces:
        return [((*fields, cur), "", False) if has else state]
    if value[0] in ifs and has:
        fields, cur, has = (*fields, cur), "", False
    cur += pieces[0]
    for p in pieces[1:]:
        fields, cur = (*fields, cur), p
    if value[-1] in ifs:
        return [((*fields, cur), "", False)]
    return [(fields, cur, True)]


class Expander:
    """Word expansion for the analyzer (which supplies ``output_of`` and the current cwd)."""

    holes: Holes
    valued: int  # counts expansions that put known values into words
    vars: dict[str, list[str]]
    arrays: dict[str, list[str]]
    ifs: str
    positional: list[str] | None
    cur_cwd: str | None

    if TYPE_CHECKING:

        def output_of(self, raws: list[SimpleCommand]) -> Output: ...
        def again(self, context: str, text: str, cwd: str | None = "") -> None: ...

    # -- holes --

    def hole(
        self,
        kind: str,
        text: str,
        why: str = "",
        *,
        out: Output | None = None,
        env: str = "",
        names: tuple[str, ...] | None = None,
        hidden: str = "all",
        split: bool = False,
        base: str | None = None,
    ) -> str:
        hole = Hole(
            kind, text, why, out=out, env=env, names=names, hidden=hidden, split=split, base=base
        )
        return self.holes.add(hole)

    def out_values(self, out: Output, text: str) -> list[str]:
        """The values a word takes when ``out`` is substituted into it."""
        kind = out.kind
        if kind in ("lit", "token", "temp", "root", "paths"):
            self.valued += 1  # a value the command computes goes into the word
        if kind == "lit":
            return [out.text.rstrip("\n")]
        if kind == "token":  # a digest or a count may still carry what it was made from
            return [self.hole("token", text, out.why, out=out if out.reads else None)]
        if kind == "temp":
            return [out.text + self.hole("token", text, "a new temporary name")]
        if kind == "root":
            return [self.hole("root", text, "the project root")]
        if kind == "paths":
            base = out.text.rstrip("/") or "/"
            sep = "" if base.endswith("/") else "/"
            hole = self.hole("paths", "…", out.why, names=out.names, hidden=out.hidden, base=base)
            return [base + sep + hole, base] if out.self_too else [base + sep + hole]
        return [self.hole("any", text, out.why, out=out)]

    # -- words --

    def expand_argv(self, words: list[str], shapes: list[Shape | None]) -> list[list[str]]:
        """The argv a command may run with: one list per combination of values."""
        if all(s is None for s in shapes):
            return [list(words)]
        alts: list[list[str]] = [[]]
        for word, shape in zip(words, shapes, strict=True):
            options = [[word]] if shape is None else self.expand_word(shape)
            if len(options) == 1:
                for a in alts:
                    a.extend(options[0])
                continue
            if len(alts) * len(options) > _MAX_ALTS:
                merged = self.hole("any", word, "it has too many possible values")
                for a in alts:
                    a.append(merged)
                continue
            alts = [[*a, *o] for a in alts for o in options]
        return alts

    def expand_word(self, shape: Shape, split: bool = True) -> list[list[str]]:
        """Alternatives of the fields one word expands to."""
        per_brace: list[list[list[str]]] = []
        for sub in _braces(shape):
            sub = self._tilde(sub)
            states: list[_State] = [((), "", False)]
            for seg in sub:
                states = self._seg(states, seg, split)
            finished = [list(f) + ([c] if h else []) for f, c, h in states]
            per_brace.append(finished[:_MAX_ALTS])
        if len(per_brace) == 1:
            return per_brace[0]
        combos: list[list[str]] = [[]]
        for options in per_brace:
            if len(combos) * len(options) > _MAX_ALTS:
                options = options[:1]
            combos = [[*c, *o] for c in combos for o in options]
        return combos

    def expand_scalar(self, shape: Shape | None, text: str) -> list[str]:
        """Values of a word that is not split (an assignment, a redirection target)."""
        if shape is None:
            return [text]
        return [" ".join(fields) for fields in self.expand_word(shape, split=False)]

    def _tilde(self, shape: Shape) -> Shape:
        """``~+`` (the current directory), ``~-`` (the previous one), ``~user``."""
        first = shape[0] if shape else None
        if first is None or first[0] != "lit" or first[2] or not first[1].startswith("~"):
            return shape
        text = first[1]
        head, sep, tail = text.partition("/")
        if head == "~+":
            cwd = self.cur_cwd
            new = (cwd or ".") if cwd is not None else self.hole("any", "~+", "the directory")
        elif head == "~-":
            new = self.hole("any", "~-", "the previous directory")
        elif head != "~" and re.fullmatch(r"~[A-Za-z_][\w.-]*", head):
            new = posixpath.expanduser(head)
            if new == head:
                return shape
        else:
            return shape
        return (("lit", new + sep + tail, False, None), *shape[1:])

    def array_elements(self, text: str) -> list[str]:
        """The elements of ``(a b c)`` (an element that is computed: unknown)."""
        inner = text[1:-1]
        if "$" in inner or "`" in inner:
            return [self.hole("any", text, "an array computed at run time")]
        try:
            return shlex.split(inner)
        except ValueError:
            return [self.hole("any", text, "an array the guard cannot read")]

    def _seg(self, states: list[_State], seg: Seg, split: bool) -> list[_State]:
        kind, text, quoted, inner = seg
        if kind == "lit":
            if not text and not quoted:
                return states
            return [(f, c + text, h or quoted or bool(text)) for f, c, h in states]
        values = self._values(kind, text, inner, quoted)
        if len(values) > _MAX_VALUES:
            values = [self.hole("any", text, "it has too many possible values")]
        spread = kind == "var" and ("[@]" in text or text in ("$@", "${@}"))
        out: list[_State] = []
        for state in states:
            for value in values:
                if (quoted and not spread) or not split or kind in ("proc", "array"):
                    f, c, _ = state
                    out.append((f, c + value, True))
                else:
                    out.extend(_add_split(state, value, " \t\n" if spread else self.ifs))
        return out[: _MAX_ALTS * 4]

    def _values(
        self, kind: str, text: str, inner: list[SimpleCommand] | None, quoted: bool
    ) -> list[str]:
        if kind == "cmd":
            return self.out_values(self.output_of(inner or []), text)
        if kind == "var":
            return self._param(text, quoted)
        if kind == "arith":
            body = text[3:-2]
            self.again("arith-parsed", body, self.cur_cwd)
            if inner is None and _ARITH_OK.fullmatch(body) and len(body) < 200 and "**" not in body:
                try:
                    value = str(int(eval(body.replace("/", "//"), {"__builtins__": {}}, {})))
                    self.valued += 1
                    return [value]
                except Exception:  # a malformed expression: bash would fail too
                    pass
            return [self.hole("token", text, "a number computed at run time")]
        if kind == "proc":
            out = self.output_of(inner or [])
            return [self.hole("fd", text, "a process substitution", out=out)]
        if kind == "array":
            return [text[1:-1]]
        return [text]

    # -- parameters --

    def _param(self, text: str, quoted: bool) -> list[str]:
        body = text[2:-1] if text.startswith("${") else text[1:]
        m = _PARAM_RE.fullmatch(body)
        if m is None:
            return [self.hole("any", text, "an expansion the guard does not read")]
        length, bang, name, index, op = m.groups()
        if length and not op:
            return [self.hole("token", text, "a length")]
        if bang:
            return [self.hole("any", text, "an indirect expansion")]
        values = self._var(name, text, quoted and index not in ("[@]", "[*]"), index)
        if index and index not in ("[@]", "[*]"):  # an indexed array's subscript is evaluated
            self.again("arith-parsed", index[1:-1], self.cur_cwd)
        if op[:1] == ":" and op[1:2] not in ("-", "=", "+", "?"):  # ${s:offset:length}
            self.again("arith-parsed", op[1:], self.cur_cwd)
        elif op == "@P":  # prompt expansion: the value's $(...) runs
            for value in values:
                self.again("prompt", value, self.cur_cwd)
        if not op:
            return values
        if op[0] == ":" and op[1:2] in ("-", "=", "+", "?"):
            op = op[1:]
        head, word = op[0], op[1:]
        if head != "?":
            self.valued += 1  # a default, an alternative or a transformation: computed
        if head in "-=":
            return values + self._default(word)
        if head == "+":
            return [*self._default(word), ""]
        if head == "?":
            return values
        if all(not has_hole(v) for v in values):
            changed = [_transform(v, op) for v in values]
            if all(c is not None for c in changed):
                return [c for c in changed if c is not None]
        return [self.hole("any", text, f"computed from ${name}")]

    def _default(self, word: str) -> list[str]:
        if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"":
            word = word[1:-1]
        if "$" not in word and "`" not in word:
            return [word]
        return [self.hole("any", word, "a default computed at run time")]

    def _var(self, name: str, text: str, quoted: bool, index: str | None = None) -> list[str]:
        elements = self.arrays.get(name)
        if elements is not None or name in self.vars:
            self.valued += 1
        if elements is not None and index is not None:
            if index in ("[@]", "[*]"):
                return [" ".join(elements)]
            key = index[1:-1].strip()
            if key.isdigit():
                return [elements[int(key)] if int(key) < len(elements) else ""]
            return [self.hole("any", text, "an array element chosen at run time")]
        if elements is not None:
            return elements[:1] or [""]
        known = self.vars.get(name)
        if known is not None:
            return known
        if name.isdigit() or name in ("@", "*"):
            if self.positional is not None:
                args = self.positional
                if name == "0":
                    picked = [args[0] if args else "bash"]
                elif name.isdigit():
                    k = int(name)
                    picked = [args[k] if k < len(args) else ""]
                else:
                    picked = [" ".join(args[1:])]
                if has_hole(picked[0]):  # a value found at run time (find's {}, xargs' items)
                    self.valued += 1
                return picked
            if name == "0":
                return ["bash"]
            return [self.hole("any", text, "a positional parameter", split=not quoted)]
        if name in _TOKENS:
            return [self.hole("token", text, "set by the shell")]
        if name == "PWD":  # an absolute path the command line does not hold: its name,
            # its parent (`${PWD##*/}`, `basename $PWD`, `$PWD/..`) are not "." and ".."
            why = "the directory the command runs in"
            if self.cur_cwd is None:
                why = "the directory after a `cd` the guard cannot follow"
            found = self.hole("any", text, why, split=not quoted)
            if self.cur_cwd is not None and not has_hole(self.cur_cwd):
                self.holes.of(found)[0].cwd = self.cur_cwd
            return [found]
        if name == "OLDPWD":
            return [self.hole("any", text, "the previous directory")]
        return [self.hole("env", text, "an environment variable", env=name, split=not quoted)]

    def assign(self, name: str, values: list[str], append: bool = False) -> None:
        """Record a value ``name`` may have from here on (every assignment counts)."""
        if append:
            base = self.vars.get(name, [""])
            values = [b + v for b in base for v in values]
        known = self.vars.setdefault(name, [])
        for v in values:
            if v not in known:
                known.append(v)
        if len(known) > _MAX_VALUES:
            self.vars[name] = [self.hole("any", "$" + name, "it takes too many values")]


def _transform(value: str, op: str) -> str | None:
    """``${x#p}``, ``${x%p}``, ``${x/a/b}``, ``${x:1:2}``, ``${x^^}`` of a known literal value."""
    import fnmatch

    head = op[0]
    if head in "#%":
        longest = op[:2] in ("##", "%%")
        pat = op[2:] if longest else op[1:]
        spans = range(len(value) + 1)
        order = list(reversed(spans)) if longest else list(spans)
        for k in order:
            if head == "#" and fnmatch.fnmatchcase(value[:k], pat):
                return value[k:]
            if head == "%" and fnmatch.fnmatchcase(value[len(value) - k :], pat):
                return value[: len(value) - k]
        return value
    if head == "/":
        every = op.startswith("//")
        pat, _, rep = op[2 if every else 1 :].partition("/")
        if any(c in pat for c in "*?[") or pat.startswith(("#", "%")):
            return None
        return value.replace(pat, rep) if every else value.replace(pat, rep, 1)
    if head == ":":
        parts = op[1:].split(":")
        try:
            off = int(parts[0].strip() or 0)
            cut = value[off:] if off >= 0 else value[len(value) + off :]
            return cut[: int(parts[1])] if len(parts) > 1 else cut
        except ValueError:
            return None
    if op in ("^^", "^"):
        return value.upper() if op == "^^" else value[:1].upper() + value[1:]
    if op in (",,", ","):
        return value.lower() if op == ",," else value[:1].lower() + value[1:]
    return None


#: shell options after which a pattern matches more than it reads: names starting with a
#: dot (``dotglob``), in any case (``nocaseglob``), ``**`` at any depth (``globstar``)
_WIDENING: Final = frozenset({"dotglob", "nocaseglob", "globstar"})


def glob_options(args: list[str], now: frozenset[str]) -> frozenset[str]:
    """The widening glob options on after ``shopt ARGS`` (``-s`` sets, ``-u`` unsets)."""
    flags = {a for a in args if a.startswith("-")}
    names = {a for a in args if not a.startswith("-")} & _WIDENING
    if "-s" in flags:
        return now | names
    if "-u" in flags:
        return now - names
    return now


def find_name(test: str, pattern: str) -> str:
    """A ``find -name`` pattern as a glob; ``-iname``'s matching either case."""
    return any_case(pattern) if test == "-iname" else pattern


def any_case(pattern: str) -> str:
    """``pattern`` matching its letters in either case: ``E`` as ``[eE]``, and a bracket
    expression's ``V`` as ``Vv`` (a range so widened may match more: never less)."""
    out, depth = [], 0
    for c in pattern:
        if c == "[":
            depth += 1
        elif c == "]" and depth:
            depth -= 1
        if not c.isalpha():
            out.append(c)
        else:
            out.append(c + c.swapcase() if depth else f"[{c.lower()}{c.upper()}]")
    return "".join(out)
