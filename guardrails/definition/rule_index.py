"""The argument rules of one chain, tested together.

A chain on one tool may hold many argument rules (``Bash(git push *)``, ...,
one per matcher). Testing them one by one costs a regex per rule per call, so
a thousand rules cost a hundred times ten. Here every distinct rule of the
chain is filed under its literal prefix (the text before its first wildcard;
every string the rule matches starts with it), so a call looks up the few
prefixes its argument starts with and tests only the rules filed there, plus
those without a prefix. Each candidate is tested with the rule's own regex,
so the answer is the rule-by-rule answer (``tests/unit/definition/
test_rule_index.py`` holds the two equal on a generated table); alternation
(several rules in one predicate) and negation (``!Bash(rm *)``) are folded in
per chain position.
"""

from __future__ import annotations

from .matchers import ArgPredicate, ArgRule, _directory, normalize_path

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

__all__ = ["RuleIndex"]


class _Prefixes:
    """Rule ids by literal prefix: ``candidates(s)`` gives every rule whose prefix ``s``
    starts with (a dict lookup per distinct prefix length)."""

    __slots__ = ("_always", "_by_len")

    def __init__(self, entries: Sequence[tuple[int, str]]) -> None:
        self._always = [r for r, p in entries if not p]
        tables: dict[int, dict[str, list[int]]] = {}
        for r, p in entries:
            if p:
                tables.setdefault(len(p), {}).setdefault(p, []).append(r)
        self._by_len = sorted(tables.items())

    def candidates(self, s: str) -> list[int]:
        found = list(self._always)
        n = len(s)
        for length, table in self._by_len:
            if length > n:
                break
            hit = table.get(s[:length])
            if hit is not None:
                found += hit
        return found


class RuleIndex:
    """Which positions of a chain an event's input selects (``None``: no argument rule,
    always selected). ``positions(tool_input, cwd)`` is sorted, as the chain runs."""

    __slots__ = (
        "_abs",
        "_arg",
        "_kind",
        "_neg_by_rule",
        "_negated",
        "_pos_by_rule",
        "_rel",
        "_rules",
        "_static",
        "_text",
    )

    def __init__(self, preds: Sequence[ArgPredicate | None]) -> None:
        given = [p for p in preds if p is not None]
        self._arg = given[0].arg if given else ""
        self._kind = given[0].kind if given else "text"
        if any(p.arg != self._arg or p.kind != self._kind for p in given):
            raise ValueError("one chain's argument rules name one argument")  # by construction
        ids: dict[str, int] = {}
        self._rules: list[ArgRule] = []
        self._pos_by_rule: list[list[int]] = []
        self._neg_by_rule: list[list[int]] = []
        self._static = [i for i, p in enumerate(preds) if p is None]
        self._negated = [i for i, p in enumerate(preds) if p is not None and p.negate]
        for i, p in enumerate(preds):
            if p is None:
                continue
            for rule in p.rules:
                r = ids.get(rule.source)
                if r is None:
                    r = ids[rule.source] = len(self._rules)
                    self._rules.append(rule)
                    self._pos_by_rule.append([])
                    self._neg_by_rule.append([])
                (self._neg_by_rule if p.negate else self._pos_by_rule)[r].append(i)
        rules = list(enumerate(self._rules))
        self._text = _Prefixes([(r, rule.text_prefix) for r, rule in rules])
        self._abs = _Prefixes([(r, x.path_prefix) for r, x in rules if x._abs_re is not None])
        groups: dict[int, list[tuple[int, ArgRule]]] = {}
        for r, rule in rules:
            if rule._abs_re is None:
                groups.setdefault(rule._ups, []).append((r, rule))
        #: relative rules by how far they climb above ``cwd``: (ups, the directory's own
        #: rules, the rules below it by prefix)
        self._rel = [
            (
                ups,
                [r for r, x in group if x._rel_re is None],
                _Prefixes([(r, x.path_prefix) for r, x in group if x._rel_re is not None]),
            )
            for ups, group in sorted(groups.items())
        ]

    def matching_rules(self, value: Any, cwd: str) -> list[int]:
        """The ids of the rules ``value`` (the tool's primary argument) matches."""
        if not isinstance(value, str):
            return []
        rules = self._rules
        if self._kind != "path":
            return [r for r in self._text.candidates(value) if rules[r]._text_re.fullmatch(value)]
        path = normalize_path(value, cwd)
        hits = [r for r in self._abs.candidates(path) if rules[r].matches_absolute(path, cwd)]
        for ups, own, below in self._rel:
            anchor = _directory(cwd, ups)
            if path == anchor:
                hits += own
            prefix = anchor if anchor == "/" else anchor + "/"
            if path.startswith(prefix):
                rest = path[len(prefix) :]
                hits += [r for r in below.candidates(rest) if rules[r]._rel_re.fullmatch(rest)]  # type: ignore[union-attr]
        return hits

    def positions(self, tool_input: Any, cwd: str, start: int = 0) -> list[int]:
        """The chain positions (from ``start``) whose rule the input matches, in order."""
        value = tool_input.get(self._arg) if isinstance(tool_input, dict) else None
        hits = self.matching_rules(value, cwd)
        chosen = set(self._static)
        refused: set[int] = set()
        for r in hits:
            chosen.update(self._pos_by_rule[r])
            refused.update(self._neg_by_rule[r])
        chosen.update(i for i in self._negated if i not in refused)
        return sorted(i for i in chosen if i >= start)
