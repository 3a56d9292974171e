"""The hand parser against tree-sitter-bash: do they split a line into the same simple commands?

``guardrails.builtins.shell.parser.parse`` is what every shell guard stands on; a
command it misses (or splits differently) is a command no rule sees.
:func:`compare` parses a line both ways and says ``agree`` (the same multiset of
simple commands, as words after quote removal), ``opaque`` (they differ, but the
analyser already calls the line opaque, so a guard treats it as the worst case),
``ts-error`` (tree-sitter itself could not parse it: no verdict) or ``disagree``.

Both sides are normalised alike: environment assignments before a command are
dropped, ``[``/``[[``/``test_command`` are left out (test expressions, not programs),
``declare``/``export``/``local``/``unset`` count as commands. Two tree-sitter-bash
quirks are undone: words after a redirection's target are the command's arguments
(bash: ``echo a > f b`` prints ``a b``), and a lone ``-`` argument, which tree-sitter
drops before a redirection, is ignored on both sides. tree-sitter is a dev
dependency only; nothing at run time imports it.

:func:`generate` writes random but well-formed bash (pipelines, lists, subshells,
groups, substitutions, redirections, quoting, compound commands) from a
``random.Random``; the tests feed it a seeded one and hypothesis' one.
"""

from __future__ import annotations

import functools
import random
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from guardrails.builtins.shell.classify import classify
from guardrails.builtins.shell.parser import parse
from guardrails.builtins.shell.syntax import MAX_DEPTH, ParseState, TooDeep
from guardrails.builtins.shell.wrappers import drop_assignments

__all__ = [
    "GENERATED_SEEDS",
    "TS_WRONG",
    "Outcome",
    "agreement",
    "compare",
    "corpora",
    "generate",
    "hand_commands",
    "is_opaque",
    "ts_commands",
]

Words = tuple[str, ...]
_SKIPPED_PROGRAMS = frozenset({"[", "[["})
_EXPANSIONS = frozenset(
    {
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "number",
        "variable_name",
        "array",
        "brace_expression",
        "special_variable_name",
        "translated_string",
    }
)
_ANSI = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b",
         "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}  # fmt: skip


@functools.cache
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def _text(node: Any) -> str:
    return str(node.text.decode("utf-8", "surrogateescape"))


def _unescape_word(text: str) -> str:
    return re.sub(r"\\(\n|.)", lambda m: "" if m.group(1) == "\n" else m.group(1), text, flags=re.S)


def _unescape_dquoted(text: str) -> str:
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def _ansi_c(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\" or i + 1 >= len(body):
            out.append(c)
            i += 1
            continue
        d = body[i + 1]
        if d in _ANSI:
            out.append(_ANSI[d])
            i += 2
        elif d in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[d]
            m = re.match(rf"[0-9A-Fa-f]{{1,{width}}}", body[i + 2 : i + 2 + width])
            if m:
                out.append(chr(min(int(m.group(), 16), 0x10FFFF)))
                i += 2 + m.end()
            else:
                out.append("\\" + d)
                i += 2
        elif d in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i + 1 : i + 4])
            assert m is not None
            out.append(chr(int(m.group(), 8)))
            i += 1 + m.end()
        else:
            out.append("\\" + d)
            i += 2
    return "".join(out)


def _word(node: Any) -> str:
    """A word after quote removal; expansions stay as written."""
    kind = node.type
    text = _text(node)
    if kind == "word" or kind == "command_name":
        return (
            "".join(_word(c) for c in node.named_children)
            if node.named_children
            else (_unescape_word(text))
        )
    if kind == "raw_string":
        return text[1:-1]
    if kind == "ansi_c_string":
        return _ansi_c(text[2:-1])
    if kind == "string":
        body = text[1:-1]
        return _unescape_dquoted(body) if "$(" not in body and "`" not in body else body
    if kind == "concatenation":
        return "".join(_word(c) for c in node.children)
    if kind == "variable_assignment":
        name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
        if name is not None:
            sep = "+=" if "+=" in text[: len(_text(name)) + 2] else "="
            return _text(name) + sep + (_word(value) if value is not None else "")
    return text


def _walk(node: Any, out: list[Words], extra: tuple[str, ...] = ()) -> None:
    """Collect the simple commands under ``node``; ``extra`` are arguments tree-sitter
    put on the command's redirection instead (``echo a > f b``: ``b`` is an argument)."""
    kind = node.type
    if kind == "redirected_statement":
        more: list[str] = []
        for redirect in node.children_by_field_name("redirect"):
            if redirect.type == "file_redirect":
                more += [_word(d) for d in redirect.children_by_field_name("destination")[1:]]
        body = node.child_by_field_name("body")
        for child in node.children:
            _walk(child, out, tuple(more) if child == body and body.type == "command" else ())
        return
    if kind == "command":
        words = [_word(c) for c in node.children_by_field_name("name")]
        end = -1
        for arg in node.children_by_field_name("argument"):
            # tree-sitter ends a word before ``<(``; bash keeps ``@<(cmd)`` one word
            if arg.start_byte == end and words:
                words[-1] += _word(arg)
            else:
                words.append(_word(arg))
            end = arg.end_byte
        words += extra
        if words:
            out.append(tuple(words))
    elif kind in ("declaration_command", "unset_command"):
        keyword = _text(node.children[0]) if node.children else kind
        out.append((keyword, *(_word(c) for c in node.named_children)))
    for child in node.children:
        _walk(child, out)


def _has_error(node: Any) -> bool:
    return bool(node.has_error)


def ts_commands(text: str) -> list[Words] | None:
    """tree-sitter-bash's simple commands of ``text``, or ``None`` when it finds a syntax error."""
    tree = _parser().parse(text.encode("utf-8", "surrogateescape"))
    if _has_error(tree.root_node):
        return None
    out: list[Words] = []
    _walk(tree.root_node, out)
    return out


def hand_commands(text: str) -> tuple[list[Words], list[str]]:
    """The hand parser's simple commands of ``text`` and the errors it collected."""
    state = ParseState()
    try:
        raws = parse(text, state, "", 0)
    except TooDeep:
        return [], [f"nesting deeper than {MAX_DEPTH} levels"]
    out = []
    for raw in raws:
        words = drop_assignments(raw.words)
        if words and words[0] not in _SKIPPED_PROGRAMS:
            out.append(tuple(words))
    return out, state.errors


def is_opaque(text: str) -> bool:
    """Does the analyser call ``text`` opaque (a guard then treats it as the worst case)?

    ``Intent.opaque`` once the analyser has it (issue #10); until then a line it could
    not analyse cleanly (``Intent.error``: a parse error, nesting too deep).
    """
    intent = classify(text)
    marker = getattr(intent, "opaque", None)
    return bool(marker) or intent.error is not None


@dataclass(frozen=True)
class Outcome:
    verdict: str  # agree | opaque | ts-error | disagree
    hand: tuple[Words, ...] = ()
    ts: tuple[Words, ...] = ()


def _without_dash(commands: list[Words]) -> list[Words]:
    return [tuple(w for w in words if w != "-") for words in commands]


def compare(text: str) -> Outcome:
    """Parse ``text`` both ways (see the module docstring for the verdicts)."""
    theirs = ts_commands(text)
    if theirs is None:
        return Outcome("ts-error")
    theirs = [w for w in theirs if w[0] not in _SKIPPED_PROGRAMS]
    ours, _ = hand_commands(text)
    # tree-sitter-bash drops a lone "-" argument before a redirection or a here-document
    ours, theirs = _without_dash(ours), _without_dash(theirs)
    if Counter(ours) == Counter(theirs):
        return Outcome("agree")
    verdict = "opaque" if is_opaque(text) else "disagree"
    return Outcome(verdict, tuple(ours), tuple(theirs))


# --- generated bash ------------------------------------------------------------------------

_PROGRAMS = ("ls", "echo", "cat", "grep", "git", "rm", "cp", "mv", "sed", "awk", "find", "make",
             "python3", "npm", "curl", "tar", "wc", "sort", "head", "printf")  # fmt: skip
_PLAIN = ("-l", "-rf", "src", "a.txt", "build/", "--all", "x", "-n", "10", "*.py", "./out",
          "--name=v", "a:b", "@x", "%s", "1", "HEAD~1", "-")  # fmt: skip
_FILES = ("out.txt", "/dev/null", "log", "'a b.txt'", "$F")


def _quoted(rng: random.Random, depth: int) -> str:
    pick = rng.randrange(12)
    deeper = depth < 3
    if pick in (8, 9) and rng.random() < 0.85:  # the rare shapes stay rare
        pick = 11
    if pick == 0:
        return "'" + rng.choice(("a b", "x | y", "$HOME", "rm -rf /", "it''s")) + "'"
    if pick == 1:
        return '"' + rng.choice(("a b", "$x", "${y:-z}", 'say \\"hi\\"', "p q")) + '"'
    if pick == 2 and deeper:
        return '"$(' + _pipeline(rng, depth + 1) + ')"'
    if pick == 3:
        return "$" + rng.choice(("x", "HOME", "1", "@", "?"))
    if pick == 4:
        return "${" + rng.choice(("x", "x:-d", "x%.c", "#x", "x/a/b")) + "}"
    if pick == 5 and deeper:
        return "$(" + _pipeline(rng, depth + 1) + ")"
    if pick == 6:
        return rng.choice(("a\\ b", "\\$x", "x\\;y", "$'a\\tb'", "{a,b}"))
    if pick == 7 and deeper:
        return "`" + _simple(rng, 3, redirects=False) + "`"
    if pick == 8 and deeper:  # a substitution inside a parameter expansion
        return "${x:-$(" + _simple(rng, depth + 1) + ")}"
    if pick == 9 and deeper:  # ... inside arithmetic
        return "$(( $(" + _simple(rng, depth + 1) + ") + 1 ))"
    if pick == 10 and deeper:
        return "<(" + _simple(rng, depth + 1) + ")"
    return rng.choice(_PLAIN)


def _simple(rng: random.Random, depth: int, redirects: bool = True) -> str:
    words = []
    if rng.random() < 0.15:
        words.append(rng.choice(("A=1", "LANG=C", "X=$(pwd)" if depth < 3 else "X=y")))
    if rng.random() < 0.01 and depth < 3:  # an array assignment that runs a command
        return "arr=( $(" + _simple(rng, depth + 1) + ") )"
    words.append(rng.choice(_PROGRAMS))
    for _ in range(rng.randrange(4)):
        words.append(_quoted(rng, depth) if rng.random() < 0.4 else rng.choice(_PLAIN))
    if redirects and rng.random() < 0.25:
        words.append(rng.choice((">", ">>", "2>", "<", "&>")) + " " + rng.choice(_FILES))
    if redirects and rng.random() < 0.1:
        words.append("2>&1")
    return " ".join(words)


def _pipeline(rng: random.Random, depth: int) -> str:
    parts = [_command(rng, depth) for _ in range(1 + (rng.random() < 0.3) + (rng.random() < 0.1))]
    return " | ".join(parts)


def _command(rng: random.Random, depth: int) -> str:
    pick = rng.random()
    if depth < 2 and pick < 0.08:
        return "( " + _list(rng, depth + 1) + " )"
    if depth < 2 and pick < 0.14:
        return "{ " + _list(rng, depth + 1) + "; }"
    if depth < 2 and pick < 0.18:
        return f"if {_simple(rng, depth)}; then {_list(rng, depth + 1)}; fi"
    if depth < 2 and pick < 0.22:
        return f"for f in *.txt; do {_list(rng, depth + 1)}; done"
    if depth < 2 and pick < 0.25:
        return f"while read -r l; do {_simple(rng, depth)}; done < {rng.choice(_FILES)}"
    if depth < 2 and pick < 0.27:
        return f'case "$x" in a) {_simple(rng, depth)};; *) {_simple(rng, depth)};; esac'
    if depth < 2 and pick < 0.29:
        return f"f() {{ {_simple(rng, depth)}; }}; f"
    return _simple(rng, depth)


def _list(rng: random.Random, depth: int) -> str:
    out = _pipeline(rng, depth)
    for _ in range(rng.randrange(3)):
        out += rng.choice((" && ", " || ", "; ", "\n", " & ")) + _pipeline(rng, depth)
    return out


def generate(rng: random.Random) -> str:
    """One random, well-formed bash command line."""
    text = _list(rng, 0)
    if rng.random() < 0.05:
        text = "cat <<EOF\nline $(date)\nEOF\n" + text
    return text


# --- the corpora the differential runs over -------------------------------------------------

#: seeded generated lines (``generate(random.Random(seed))``), part of the differential corpus
GENERATED_SEEDS = range(500)
#: lines tree-sitter-bash itself gets wrong (the differential says nothing about them)
TS_WRONG: dict[str, str] = {
    "del-wrapper-known-5": "tree-sitter-bash reads `coproc NAME { ...; }` as a command and a `}`",
    "del-wrapper-known-4": "tree-sitter-bash reads `coproc cmd` as a command named coproc",
    "dl-eval-fetched-9": "tree-sitter-bash reads `coproc cmd` as a command named coproc",
    "pw-wrapped-26": "tree-sitter-bash reads `coproc cmd` as a command named coproc",
    "del-hidden-in-expansion-3": "tree-sitter-bash does not look into `${x:-`cmd`}`",
    "gen-449": "tree-sitter-bash splits backticks nested in backticks at the inner ones",
}


def corpora() -> dict[str, list[tuple[str, str]]]:
    """``{corpus: [(id, line), ...]}``: the benign corpora, generated lines, the red team."""
    from . import ALL
    from .benign_independent import BENIGN_INDEPENDENT
    from .benign_transcripts import BENIGN
    from .sandbox import render

    def lines(items: list[Any], prefix: str) -> list[tuple[str, str]]:
        return [(f"{prefix}-{i:03d}", render(b.command, "/project", "/home/user"))
                for i, b in enumerate(items)]  # fmt: skip

    return {
        "benign": lines(BENIGN, "benign"),
        "independent": lines(BENIGN_INDEPENDENT, "independent"),
        "generated": [(f"gen-{s:03d}", generate(random.Random(s))) for s in GENERATED_SEEDS],
        "redteam": [(c.id, render(c.command, "/project", "/home/user")) for c in ALL],
    }


def agreement() -> dict[str, dict[str, Any]]:
    """Per corpus: how many lines agree, are opaque, disagree, or tree-sitter cannot parse."""
    out: dict[str, dict[str, Any]] = {}
    for name, items in corpora().items():
        counts: Counter[str] = Counter()
        disagree = []
        for ident, text in items:
            verdict = "ts-wrong" if ident in TS_WRONG else compare(text).verdict
            counts[verdict] += 1
            if verdict == "disagree":
                disagree.append(ident)
        judged = counts["agree"] + counts["opaque"] + counts["disagree"]
        out[name] = {
            "total": len(items),
            **{k: counts[k] for k in ("agree", "opaque", "disagree", "ts-error", "ts-wrong")},
            "agreement_rate": round(counts["agree"] / judged, 4) if judged else 0.0,
            "agree_or_opaque_rate": round((counts["agree"] + counts["opaque"]) / judged, 4)
            if judged
            else 0.0,
            "disagreements": disagree,
        }
    return out
