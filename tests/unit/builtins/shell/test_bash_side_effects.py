"""``bash_side_effects``: what a shell command line would do, read before it runs.

The table pins ``classify(command).kinds`` for real agent command lines:
control operators, nesting, redirections, here-documents, wrappers, and the
common mutating tools. Nothing here runs a command; the module only parses.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from guardrails import AgentDefinition, Guard, Ledger
from guardrails.builtins import BashSideEffects, bash_side_effects
from guardrails.builtins.shell.classify import KINDS, classify
from guardrails.definition.model import ToolSpec
from guardrails.testing import SpyTool, make_event
from tests._guards import build_guard

RO = frozenset({"read_only"})


def k(*kinds: str) -> frozenset[str]:
    return frozenset(kinds)


# (id, command, expected kinds)
CASES: list[tuple[str, str, frozenset[str]]] = [
    # --- plain commands
    ("ls", "ls -la", RO),
    ("cat-file", "cat README.md", RO),
    ("rm", "rm -rf build", k("delete")),
    ("rmdir", "rmdir empty", k("delete")),
    ("mv", "mv a.txt b.txt", k("move")),
    ("cp", "cp a.txt b.txt", k("file_write")),
    ("touch", "touch new.txt", k("file_write")),
    ("mkdir", "mkdir -p a/b/c", k("file_write")),
    ("ln", "ln -s target link", k("file_write")),
    ("chmod", "chmod +x run.sh", k("file_write")),
    ("sed-in-place", "sed -i 's/a/b/' f.txt", k("file_write")),
    ("sed-stdout", "sed 's/a/b/' f.txt", RO),
    ("tar-create", "tar czf out.tgz src", k("file_write")),
    ("tar-list", "tar tzf out.tgz", RO),
    ("dd-of-file", "dd if=/dev/zero of=disk.img bs=1M count=1", k("file_write")),
    ("mkfs", "mkfs.ext4 /dev/sdb1", k("delete")),
    # --- pipes and lists
    ("pipe-read-only", "cat app.log | grep ERROR | wc -l", RO),
    ("pipe-into-tee", "make 2>&1 | tee build.log", k("unknown", "file_write")),
    ("pipe-stderr-too", "pytest |& tee out.log", k("file_write")),
    ("and-read-only", "git status && git diff", RO),
    ("and-then-delete", "ls && rm -f x", k("delete")),
    ("or-then-write", "test -f x || touch x", k("file_write")),
    ("semicolon", "ls; rm x", k("delete")),
    ("semicolon-no-space", "ls;mv a b", k("move")),
    ("newline-separated", "ls\nrm x\n", k("delete")),
    ("background", "sleep 1 & rm x", k("delete")),
    ("pipe-to-xargs-kill", "pgrep node | xargs kill", k("process_control")),
    # --- subshells and substitutions
    ("subshell", "(cd src && rm -rf dist)", k("delete")),
    ("subshell-read-only", "(ls; pwd)", RO),
    ("brace-group", "{ ls; touch x; }", k("file_write")),
    ("dollar-paren", "echo $(rm -rf x)", k("delete")),
    ("dollar-paren-in-dquote", 'echo "$(git push)"', k("git_mutation", "network_mutation")),
    ("backticks", "echo `touch y`", k("file_write")),
    ("nested-substitution", "echo $(echo $(mv a b))", k("move")),
    ("process-substitution", "diff <(ls a) <(ls b)", RO),
    ("assignment-from-substitution", "X=$(rm -f x)", k("delete")),
    # --- redirections
    ("redirect-write", "echo hi > out.txt", k("file_write")),
    ("redirect-append", "echo hi >> log.txt", k("file_write")),
    ("redirect-no-space", "echo hi >out.txt", k("file_write")),
    ("redirect-stderr-to-file", "ls 2> errors.log", k("file_write")),
    ("redirect-both-ampersand", "pytest &> out.log", k("file_write")),
    ("redirect-both-append", "pytest &>> out.log", k("file_write")),
    ("redirect-dup-only", "pytest -q 2>&1", RO),
    ("redirect-to-stderr", "echo oops >&2", RO),
    ("redirect-dev-null", "ls >/dev/null", RO),
    ("redirect-dev-null-and-dup", "grep -r foo . > /dev/null 2>&1", RO),
    ("redirect-stderr-dev-null", "find / -name x 2>/dev/null", RO),
    ("redirect-clobber", "echo x >| f.txt", k("file_write")),
    ("redirect-bare", "> empty.txt", k("file_write")),
    ("redirect-input", "wc -l < input.txt", RO),
    ("redirect-on-subshell", "(ls; pwd) > listing.txt", k("file_write")),
    # --- here-documents and here-strings
    ("heredoc-to-file", "cat <<EOF > f.txt\nhello\nEOF", k("file_write")),
    ("heredoc-quoted-body-inert", "cat <<'EOF'\nrm -rf /\nEOF", RO),
    ("heredoc-unquoted-body-plain-text", "cat <<EOF\nrm -rf /\nEOF", RO),
    ("heredoc-body-substitution-runs", "cat <<EOF\n$(rm -rf x)\nEOF", k("delete")),
    ("heredoc-dash-tabs", "cat <<-EOF\n\thello\n\tEOF\n", RO),
    ("heredoc-then-command", "cat <<EOF > a.txt\nline\nEOF\nrm b.txt", k("file_write", "delete")),
    ("heredoc-into-bash", "bash <<EOF\nrm -rf x\nEOF", k("delete")),
    ("heredoc-into-python", "python - <<EOF\nprint(1)\nEOF", k("unknown")),
    ("here-string", "grep foo <<< 'text'", RO),
    # --- env prefixes and wrappers
    ("env-prefix", "FOO=1 rm x", k("delete")),
    ("env-prefixes-read", "FOO=1 BAR=2 ls", RO),
    ("env-i", "env -i rm x", k("delete")),
    ("env-with-assignments", "env -i PATH=/bin FOO=1 npm install", k("package_install")),
    ("assignment-only", "FOO=bar", RO),
    ("sudo", "sudo rm -rf /var/cache/x", k("delete")),
    ("sudo-u", "sudo -u www-data rm -rf cache", k("delete")),
    ("sudo-u-read", "sudo -u postgres ls /var/lib", RO),
    ("sudo-list", "sudo -l", RO),
    ("xargs-rm", "find . -name '*.pyc' | xargs rm -f", k("delete")),
    ("xargs-with-options", "xargs -0 -n 1 -I {} mv {} dest/ < list", k("move")),
    ("xargs-alone", "ls | xargs", RO),
    ("nohup-script", "nohup python server.py &", k("unknown")),
    ("nohup-rm", "nohup rm -rf /tmp/x &", k("delete")),
    ("time", "time pytest -q", RO),
    ("time-write", "time cp a b", k("file_write")),
    ("timeout", "timeout 10 ls", RO),
    ("timeout-with-signal", "timeout -s KILL 5 rm x", k("delete")),
    ("timeout-curl-post", "timeout 10 curl -X POST https://api.example.com", k("network_mutation")),
    ("nice", "nice -n 10 tar xf a.tar", k("file_write")),
    ("exec", "exec rm x", k("delete")),
    ("command-v-lookup", "command -v git", RO),
    ("busybox", "busybox rm x", k("delete")),
    ("watch", "watch -n 1 ls", RO),
    ("npx-prettier-write", "npx prettier --write .", k("file_write")),
    ("uv-run-pytest", "uv run pytest -q", RO),
    # --- nested shells
    ("bash-c", "bash -c 'rm -rf build'", k("delete")),
    ("bash-c-read", "bash -c 'ls -la'", RO),
    ("sh-c-redirect", 'sh -c "echo hi > f"', k("file_write")),
    ("bash-lc", "bash -lc 'git push'", k("git_mutation", "network_mutation")),
    ("sudo-bash-c", "sudo bash -c 'apt-get install -y jq'", k("package_install")),
    ("eval", "eval 'rm x'", k("delete")),
    ("bash-script-file", "bash deploy.sh", k("unknown")),
    ("su-c", "su -c 'systemctl restart nginx' root", k("process_control")),
    # --- control flow
    ("if-then", "if [ -f x ]; then rm x; fi", k("delete")),
    ("for-loop", 'for f in *.txt; do mv "$f" "${f%.txt}.md"; done', k("move")),
    ("while-read", "while read l; do echo $l; done < file", RO),
    ("case", "case $x in a) rm x;; esac", k("delete")),
    ("function-definition", "f() { rm -rf x; }; f", k("delete")),
    ("cd-then-rm", "cd /tmp && rm -rf x", k("delete")),
    ("negated-if", "if ! grep -q x f; then echo y >> f; fi", k("file_write")),
    ("dbracket-and", "[[ -f x ]] && rm x", k("delete")),
    ("time-subshell", "time (rm x)", k("delete")),
    ("substitution-with-case", "echo $(case x in a) rm y;; esac)", k("delete")),
    ("exec-redirect", "exec > log.txt 2>&1", k("file_write")),
    ("yes-pipe-install", "yes | apt-get install x", k("package_install")),
    (
        "commit-message-heredoc",
        "git commit -m \"$(cat <<'EOF'\nfix: stop rm -rf / in docs\nEOF\n)\"",
        k("git_mutation"),
    ),
    ("substitution-heredoc", "x=$(cat <<EOF\nhello\nEOF\n)", RO),
    ("python-m-venv", "python3 -m venv .venv", k("file_write")),
    ("python-m-pytest", "python -m pytest -x", RO),
    ("node-script", "node build.js", k("unknown")),
    ("git-dir-env-push", "GIT_DIR=x git push", k("git_mutation", "network_mutation")),
    ("sudo-E-pip", "sudo -E pip install x", k("package_install")),
    ("echo-pwd-substitution", 'echo "rm -rf $(pwd)"', RO),
    ("mv-t", "mv -t dest a b", k("move")),
    ("awk-print-to-file", "awk '{print > \"out.txt\"}' f", k("file_write")),
    # --- git
    ("git-status", "git status", RO),
    ("git-log-pipe", "git log --oneline | head -5", RO),
    ("git-commit", "git commit -m 'fix: thing'", k("git_mutation")),
    ("git-push", "git push origin main", k("git_mutation", "network_mutation")),
    ("git-C-push", "git -C repo push", k("git_mutation", "network_mutation")),
    ("git-C-status", "git -C repo status", RO),
    ("git-c-config-push", "git -c user.name=x push", k("git_mutation", "network_mutation")),
    ("git-push-dry-run", "git push --dry-run", RO),
    ("git-checkout-branch", "git checkout -b feature", k("git_mutation")),
    ("git-rm", "git rm old.py", k("delete", "git_mutation")),
    ("git-rm-cached", "git rm --cached secrets.txt", k("git_mutation")),
    ("git-mv", "git mv a.py b.py", k("move", "git_mutation")),
    ("git-clean", "git clean -fdx", k("delete")),
    ("git-stash", "git stash", k("git_mutation")),
    ("git-stash-list", "git stash list", RO),
    ("git-branch-list", "git branch", RO),
    ("git-branch-delete", "git branch -D old", k("git_mutation")),
    ("git-config-get", "git config user.name", RO),
    ("git-config-set", "git config user.name me", k("git_mutation")),
    ("git-alias", "git lg", k("unknown")),
    # --- find
    ("find-list", "find . -type f -name '*.py'", RO),
    ("find-delete", "find . -name '*.tmp' -delete", k("delete")),
    ("find-exec-rm", "find . -name '*.log' -exec rm {} \\;", k("delete")),
    ("find-exec-rm-plus", "find . -name '*.log' -exec rm -f {} +", k("delete")),
    ("find-exec-grep", "find . -name '*.py' -exec grep -l TODO {} +", RO),
    ("find-execdir-mv", "find . -name a -execdir mv {} b \\;", k("move")),
    # --- network
    ("curl-get", "curl https://example.com", RO),
    ("curl-get-to-jq", "curl -s https://api.example.com/x | jq .", RO),
    ("curl-explicit-get", "curl -X GET https://example.com", RO),
    ("curl-head", "curl -I https://example.com", RO),
    ("curl-post", "curl -X POST https://api.example.com -d '{}'", k("network_mutation")),
    ("curl-data-implies-post", "curl -d 'a=1' https://example.com", k("network_mutation")),
    ("curl-json", "curl --json '{\"a\":1}' https://example.com", k("network_mutation")),
    ("curl-form", "curl -F file=@x.png https://example.com", k("network_mutation")),
    ("curl-delete", "curl --request DELETE https://example.com/1", k("network_mutation")),
    ("curl-get-with-data", "curl -G -d q=1 https://example.com", RO),
    ("curl-output-file", "curl -o page.html https://example.com", k("file_write")),
    ("curl-remote-name", "curl -O https://example.com/f.tgz", k("file_write")),
    ("curl-output-dev-null", "curl -o /dev/null https://example.com", RO),
    ("wget", "wget https://example.com/f.tgz", k("file_write")),
    ("wget-to-stdout", "wget -qO- https://example.com", RO),
    ("wget-spider", "wget --spider https://example.com", RO),
    ("wget-post", "wget --post-data 'a=1' https://x.io", k("network_mutation", "file_write")),
    ("ssh", "ssh host uptime", k("network_mutation")),
    ("scp-remote", "scp f.txt user@host:/tmp/", k("network_mutation")),
    ("rsync-remote", "rsync -av src/ host:/srv/app", k("network_mutation")),
    ("rsync-local-delete", "rsync -a --delete src/ dst/", k("file_write", "delete")),
    ("gh-pr-create", "gh pr create --fill", k("network_mutation")),
    ("gh-pr-view", "gh pr view 12", RO),
    ("kubectl-apply", "kubectl apply -f deploy.yaml", k("network_mutation")),
    ("kubectl-get", "kubectl get pods -n prod", RO),
    # --- packages
    ("pip-install", "pip install requests", k("package_install")),
    ("pip3-install-r", "pip3 install -r requirements.txt", k("package_install")),
    ("python-m-pip", "python -m pip install -U pip", k("package_install")),
    ("pip-uninstall", "pip uninstall -y requests", k("package_install")),
    ("pip-install-dry-run", "pip install --dry-run requests", RO),
    ("pip-list", "pip list", RO),
    ("pip-freeze-to-file", "pip freeze > requirements.txt", k("file_write")),
    ("npm-install", "npm install", k("package_install")),
    ("npm-i-dev", "npm i -D typescript", k("package_install")),
    ("npm-ci", "npm ci", k("package_install")),
    ("npm-test", "npm test", RO),
    ("npm-run-build", "npm run build", k("file_write")),
    ("npm-run-dev", "npm run dev", k("unknown")),
    ("npm-publish", "npm publish", k("network_mutation")),
    ("yarn-add", "yarn add react", k("package_install")),
    ("apt-get-install", "apt-get install -y curl", k("package_install")),
    ("sudo-apt-install", "sudo apt install -y curl", k("package_install")),
    ("apt-get-simulate", "apt-get -s install curl", RO),
    ("apt-cache", "apt-cache search jq", RO),
    ("brew-install", "brew install jq", k("package_install")),
    ("brew-list", "brew list", RO),
    ("brew-services-restart", "brew services restart postgresql", k("process_control")),
    ("cargo-install", "cargo install ripgrep", k("package_install")),
    ("cargo-add", "cargo add serde", k("package_install")),
    ("cargo-test", "cargo test", RO),
    ("cargo-build", "cargo build --release", k("file_write")),
    ("uv-add", "uv add httpx", k("package_install")),
    ("uv-pip-install", "uv pip install httpx", k("package_install")),
    ("go-install", "go install golang.org/x/tools/gopls@latest", k("package_install")),
    # --- process control
    ("kill", "kill 1234", k("process_control")),
    ("kill-9-substitution", "kill -9 $(pgrep node)", k("process_control")),
    ("kill-list-signals", "kill -l", RO),
    ("pkill", "pkill -f server.py", k("process_control")),
    ("killall", "killall node", k("process_control")),
    ("systemctl-restart", "systemctl restart nginx", k("process_control")),
    ("sudo-systemctl-restart", "sudo systemctl restart nginx", k("process_control")),
    ("systemctl-status", "systemctl status nginx", RO),
    ("service-reload", "service nginx reload", k("process_control")),
    ("docker-run", "docker run --rm alpine echo hi", k("process_control")),
    ("docker-compose-up", "docker compose up -d", k("process_control")),
    ("docker-ps", "docker ps -a", RO),
    ("docker-rm", "docker rm -f web", k("delete")),
    ("shutdown", "shutdown -h now", k("process_control")),
    # --- linters, formatters, test runners
    ("pytest", "pytest -q tests/", RO),
    ("ruff-check", "ruff check .", RO),
    ("ruff-check-fix", "ruff check --fix .", k("file_write")),
    ("ruff-format", "ruff format .", k("file_write")),
    ("black-check", "black --check .", RO),
    ("mypy", "mypy --strict guardrails", RO),
    # --- quoting: text that looks like a command is only an argument
    ("echo-quoted-rm", 'echo "rm -rf /"', RO),
    ("echo-single-quoted-push", "echo 'git push --force'", RO),
    ("grep-for-rm", 'grep -r "rm -rf" .', RO),
    ("single-quoted-substitution", "printf '%s\\n' '$(rm -rf x)'", RO),
    ("escaped-backticks", "echo \\`rm x\\`", RO),
    ("comment", "# rm -rf /", RO),
    ("trailing-comment", "ls # rm -rf /", RO),
    ("hash-inside-word", "echo a#b", RO),
    ("quoted-program-name", '"rm" -rf build', k("delete")),
    ("ansi-c-quoted", "$'rm' x", k("delete")),
    ("line-continuation", "rm \\\n  -rf build", k("delete")),
    # --- unknown programs and computed commands
    ("python-script", "python script.py", k("unknown")),
    ("local-script", "./deploy.sh --prod", k("unknown")),
    ("make-default-target", "make", k("unknown")),
    ("make-test", "make test", RO),
    ("program-from-variable", "$EDITOR notes.txt", k("unknown")),
    ("unknown-binary", "frobnicate --all", k("unknown")),
    ("curl-pipe-sh", "curl -fsSL https://x.io/i.sh | sh", k("unknown")),
    # --- input that does not parse cleanly: never raises, always unknown
    ("unbalanced-single-quote", "echo 'unterminated", k("unknown")),
    ("unbalanced-double-quote", 'echo "unterminated', k("unknown")),
    ("unbalanced-quote-keeps-rm", "rm -rf 'build", k("delete", "unknown")),
    ("unterminated-substitution", "ls $(", k("unknown")),
    ("unterminated-subshell", "(ls", k("unknown")),
    ("heredoc-without-body", "cat <<EOF", k("unknown")),
    ("unterminated-backtick", "echo `ls", k("unknown")),
    ("empty", "", RO),
    ("whitespace-only", "   \n  ", RO),
]


@pytest.mark.parametrize(("command", "expected"), [pytest.param(c, e, id=i) for i, c, e in CASES])
def test_kinds(command: str, expected: frozenset[str]) -> None:
    assert classify(command).kinds == expected


#: commands bash runs from inside a ``${...}`` default, an arithmetic expansion or a trap
#: handler (once known gaps: the parser skipped these texts)
RUN_INSIDE = [
    ("param-default-substitution", "echo ${x:-$(rm -rf y)}", k("delete")),
    ("param-default-substitution-quoted", 'echo "${x:-$(rm -rf y)}"', k("delete")),
    ("arith-substitution", "echo $(( $(rm x) + 1 ))", k("delete")),
    ("trap-handler", "trap 'rm -f /tmp/x' EXIT", k("delete")),
]


@pytest.mark.parametrize(
    ("command", "expected"), [pytest.param(c, e, id=i) for i, c, e in RUN_INSIDE]
)
def test_commands_inside_expansions_and_traps_are_seen(
    command: str, expected: frozenset[str]
) -> None:
    assert classify(command).kinds == expected


def test_the_table_is_large_and_covers_every_kind() -> None:
    ids = [i for i, _, _ in CASES]
    assert len(CASES) >= 80 and len(set(ids)) == len(ids)
    assert set().union(*(e for _, _, e in CASES)) == set(KINDS)


# --- parse errors --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "message"),
    [
        pytest.param("echo 'x", "unterminated single quote", id="single-quote"),
        pytest.param('echo "x', "unterminated double quote", id="double-quote"),
        pytest.param("echo $(ls", "unterminated $(", id="substitution"),
        pytest.param("cat <<EOF", "here-document without its body", id="heredoc"),
    ],
)
def test_a_parse_error_is_named_in_error(command: str, message: str) -> None:
    intent = classify(command)
    assert intent.error is not None and message in intent.error


def test_a_clean_line_has_no_error() -> None:
    assert classify("ls -la | wc -l").error is None


def test_commands_parsed_before_an_error_are_kept() -> None:
    intent = classify("rm -rf 'build")
    assert [c.argv for c in intent.commands] == [("rm", "-rf", "build")]


@pytest.mark.parametrize(
    "value",
    [pytest.param(None, id="none"), pytest.param(["ls"], id="list"), pytest.param(3, id="int")],
)
def test_a_non_string_is_unknown_not_an_exception(value: Any) -> None:
    intent = classify(value)
    assert intent.kinds == {"unknown"} and intent.error and "not a command string" in intent.error


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("echo " + "$(" * 200 + "ls" + ")" * 200, id="substitutions"),
        pytest.param("eval " * 40 + "ls", id="nested-scripts"),
    ],
)
def test_deep_nesting_is_unknown_not_an_exception(command: str) -> None:
    intent = classify(command)
    assert "unknown" in intent.kinds and intent.error == "nesting deeper than 12 levels"


# --- the commands --------------------------------------------------------------------


def test_wrappers_are_peeled_from_argv() -> None:
    (cmd,) = classify("sudo -u x env FOO=1 nohup timeout 10 rm -f a.txt").commands
    assert cmd.argv == ("rm", "-f", "a.txt") and cmd.kind == "delete"


def test_redirect_targets_are_listed_without_sinks_or_duplications() -> None:
    (cmd,) = classify("make > build.log 2>&1 2>/dev/null").commands
    assert cmd.redirects == ("build.log",) and "build.log" in cmd.targets


def test_a_bare_redirection_is_a_command_with_empty_argv() -> None:
    (cmd,) = classify("> out.txt").commands
    assert cmd.argv == () and cmd.redirects == ("out.txt",) and cmd.kind == "file_write"


def test_copy_targets_and_sources() -> None:
    (cmd,) = classify("cp a.txt b.txt dest/").commands
    assert cmd.targets == ("dest/a.txt", "dest/b.txt") and cmd.sources == ("a.txt", "b.txt")


def test_move_changes_both_source_and_destination() -> None:
    (cmd,) = classify("mv old.txt new.txt").commands
    assert set(cmd.targets) == {"old.txt", "new.txt"}


def test_tee_targets_skip_dev_null() -> None:
    (_, tee) = classify("ls | tee -a log.txt /dev/null").commands
    assert tee.targets == ("log.txt",)


def test_cwd_follows_the_lines_own_cd() -> None:
    cmds = classify("cd build && rm -rf out; cd ../dist && touch x").commands
    assert [(c.program, c.cwd) for c in cmds] == [
        ("cd", ""),
        ("rm", "build"),
        ("cd", "build"),
        ("touch", "dist"),
    ]


def test_cwd_is_unknown_after_cd_to_a_computed_folder() -> None:
    cmds = classify("cd $(cat dir.txt) && rm x").commands
    assert cmds[-1].cwd is None


def test_cwd_after_cd_to_an_environment_variable_is_that_variable() -> None:
    # the guards read the variable from their environment (issue #10: was None)
    intent = classify("cd $DIR && rm x")
    assert intent.commands[-1].as_dict(intent.holes)["cwd"] == "$DIR"


def test_cd_inside_a_subshell_does_not_leak() -> None:
    cmds = classify("(cd sub && touch a); touch b").commands
    assert [(c.targets, c.cwd) for c in cmds if c.program == "touch"] == [
        (("a",), "sub"),
        (("b",), ""),
    ]


def test_commands_of_one_pipeline_share_a_number() -> None:
    cmds = classify("cat x | grep y | wc -l; ls").commands
    assert len({c.pipeline for c in cmds[:3]}) == 1 and cmds[3].pipeline != cmds[0].pipeline


def test_substitution_commands_come_before_the_command_using_them() -> None:
    assert [c.program for c in classify("echo $(date)").commands] == ["date", "echo"]


def test_command_kind_is_the_most_severe_of_its_kinds() -> None:
    (cmd,) = classify("git rm x").commands
    assert cmd.kinds == {"delete", "git_mutation"} and cmd.kind == "delete"


def test_program_is_the_base_name() -> None:
    (cmd,) = classify("/bin/rm x").commands
    assert cmd.program == "rm" and cmd.kind == "delete"


# --- side_effecting and as_dict ------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        pytest.param("ls -la", False, id="read-only"),
        pytest.param("git log | head", False, id="read-only-pipeline"),
        pytest.param("rm x", True, id="delete"),
        pytest.param("echo x > f", True, id="redirect"),
        pytest.param("python x.py", True, id="unknown-program"),
        pytest.param("echo 'x", True, id="parse-error"),
    ],
)
def test_side_effecting(command: str, expected: bool) -> None:
    assert classify(command).side_effecting is expected


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("ls", id="simple"),
        pytest.param("git rm x && cd a && echo hi > f.txt", id="several-kinds"),
        pytest.param("cd $X && rm y", id="unknown-cwd"),
        pytest.param("echo 'x", id="parse-error"),
        pytest.param("cat <<EOF > f\nbody\nEOF", id="heredoc"),
    ],
)
def test_as_dict_round_trips_through_json(command: str) -> None:
    data = classify(command).as_dict()
    assert json.loads(json.dumps(data)) == data


def test_as_dict_lists_kinds_most_severe_first() -> None:
    data = classify("touch a; rm b; python c.py").as_dict()
    assert data["kinds"] == ["delete", "file_write", "unknown"]
    assert data["side_effecting"] is True


def test_as_dict_describes_each_command() -> None:
    data = classify("cd out && echo hi > f.txt").as_dict()
    assert data["commands"][1] == {
        "argv": ["echo", "hi"],
        "kind": "file_write",
        "redirects": ["f.txt"],
        "targets": ["f.txt"],
        "cwd": "out",
    }


def test_as_dict_includes_the_error() -> None:
    assert "unterminated" in classify("echo 'x").as_dict()["error"]


def test_as_dict_caps_the_command_list() -> None:
    data = classify("; ".join(["ls"] * 150)).as_dict()
    assert len(data["commands"]) == 100 and data["commands_omitted"] == 50


# --- the hook ------------------------------------------------------------------------


def guard(ledger: Ledger | bool = False, **tools: ToolSpec) -> Guard:
    return build_guard([bash_side_effects], tools=dict(tools), ledger=ledger)


def test_the_hook_attaches_the_intent_as_annotations() -> None:
    d = guard().sync.pre_tool_use("Bash", {"command": "rm -rf build && ls"})
    intent = d.annotations["intent"] if d.annotations else None
    assert intent == classify("rm -rf build && ls").as_dict()
    assert intent["kinds"] == ["delete"] and intent["side_effecting"] is True


def test_the_hook_never_decides() -> None:
    d = guard().sync.pre_tool_use("Bash", {"command": "rm -rf /"})
    assert d.decision == "allow" and [r.outcome for r in d.runs] == ["noop"]


def test_a_call_without_a_command_gets_no_annotations() -> None:
    d = guard().sync.pre_tool_use("Read", {"file_path": "x"})
    assert d.annotations is None


def test_a_declared_text_primary_arg_is_the_command() -> None:
    g = guard(run=ToolSpec(primary_arg="cmd"))
    d = g.sync.pre_tool_use("run", {"cmd": "pip install x"})
    assert d.annotations and d.annotations["intent"]["kinds"] == ["package_install"]


def test_the_hook_called_directly_returns_annotations_only() -> None:
    event = make_event("PreToolUse", tool_name="Bash", tool_input={"command": "mv a b"})
    result = BashSideEffects()(event, None)
    assert result is not None and result.decision is None
    assert result.annotations == {"intent": classify("mv a b").as_dict()}


def test_the_intent_is_stored_with_the_call_in_the_ledger(tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    tool = SpyTool("done")
    guard(Ledger(db)).sync.run_tool("Bash", {"command": "git push origin main"}, tool)
    assert len(tool.calls) == 1
    conn = sqlite3.connect(db)
    (raw,) = conn.execute("SELECT annotations FROM tool_calls").fetchone()
    conn.close()
    assert json.loads(raw)["intent"]["kinds"] == ["git_mutation", "network_mutation"]


def test_the_ledger_can_select_side_effecting_calls(tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    g = guard(Ledger(db))
    for command in ("ls", "rm x", "cat f"):
        g.sync.run_tool("Bash", {"command": command}, SpyTool())
    conn = sqlite3.connect(db)
    rows = conn.execute(
        "SELECT json_extract(tool_call_arguments, '$.command') FROM tool_calls "
        "WHERE json_extract(annotations, '$.intent.side_effecting')"
    ).fetchall()
    conn.close()
    assert rows == [("rm x",)]


def test_declared_by_name_in_a_file(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(
        "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks: [bash_side_effects]\n",
        encoding="utf-8",
    )
    d = Guard(AgentDefinition.from_file(path), ledger=False).sync.pre_tool_use(
        "Bash", {"command": "touch x"}
    )
    assert d.annotations and d.annotations["intent"]["kinds"] == ["file_write"]
