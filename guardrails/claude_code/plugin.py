"""``hookrails claude plugin``: a team's guardrails as a Claude Code plugin.

The folder written::

    <out>/.claude-plugin/plugin.json   the manifest (name, description, version)
    <out>/hooks/hooks.json             the handlers ``install`` would write, naming the
                                       definition as ${CLAUDE_PLUGIN_ROOT}/hookrails/<file>
    <out>/hookrails/<file>             the definition, and beside it the files it names
                                       relative to its folder: hook modules
                                       (``module:function``) and tool schema files

The handlers run ``hookrails`` from ``PATH`` (each user installs hookrails; the
plugin carries the policy, not the program) in exec form, so the plugin's path
is one argument whatever it holds. Claude Code 2.1.332 loads such a folder with
``claude --plugin-dir <out>`` (claude-agent-sdk: ``plugins=[{"type": "local",
"path": ...}]``) or from a marketplace.
"""

from __future__ import annotations

import os
import re
import shutil
from typing import Any

from ..errors import SettingsError

__all__ = ["PluginResult", "write_plugin"]

#: the folder inside the plugin that holds the definition and its files
POLICY_DIR = "hookrails"
_NAME = re.compile(r"[^a-z0-9]+")


class PluginResult:
    """What :func:`write_plugin` wrote: the folder, its files and what to know."""

    def __init__(self, folder: str, name: str, files: list[str], notes: list[str]) -> None:
        self.folder = folder
        self.name = name
        self.files = files  # relative to the folder
        self.notes = notes  # warnings for the user


def _plugin_name(definition_name: str | None, given: str | None) -> str:
    name = given or _NAME.sub("-", (definition_name or "guardrails").lower()).strip("-")
    if not name or not re.fullmatch(r"[a-z0-9][a-z0-9-]*", name):
        raise SettingsError(
            f"plugin name {name!r} must be lowercase letters, digits and '-' (kebab-case)"
        )
    return name


def _local_files(definition: Any, base: str) -> tuple[list[str], list[str]]:
    """The files the definition names relative to its folder (hook modules, schema files),
    as paths relative to ``base``; and notes on what cannot be known (command hooks)."""
    found: list[str] = []
    notes: list[str] = []

    def add(rel: str) -> None:
        if rel not in found:
            found.append(rel)

    for matchers in definition.hooks.values():
        for m in matchers:
            for ref in m.hooks:
                target = ref.get("use") if isinstance(ref, dict) else ref
                if isinstance(ref, dict) and "command" in ref:
                    notes.append(
                        f"the command hook {ref['command']!r} runs in the plugin's "
                        f"{POLICY_DIR}/ folder: add the files it needs there"
                    )
                if not isinstance(target, str) or ":" not in target:
                    continue
                top = target.split(":", 1)[0].split(".", 1)[0]
                if os.path.isfile(os.path.join(base, top + ".py")):
                    add(top + ".py")
                elif os.path.isdir(os.path.join(base, top)):
                    add(top)
    for spec in definition.tools.values():
        schema = spec.schema
        if isinstance(schema, str) and ":" not in schema:
            path = os.path.normpath(os.path.join(base, schema))
            rel = os.path.relpath(path, base)
            if os.path.exists(path) and not rel.startswith(".."):
                add(rel)
    return found, notes


def write_plugin(
    config: str,
    out: str,
    *,
    name: str | None = None,
    ledger: bool = True,
    force: bool = False,
) -> PluginResult:
    """Write the plugin for the definition ``config`` into the folder ``out``.

    ``out`` must be missing or empty, or (``force``) a plugin this wrote before,
    which is replaced. Raises :class:`~guardrails.errors.SettingsError` with
    what was wrong.
    """
    from .._version import __version__
    from ..definition.cache import load_definition
    from .settings_install import _command_groups, _dump, _setup

    folder = os.path.abspath(out)
    if os.path.isdir(folder) and os.listdir(folder):
        ours = os.path.isfile(os.path.join(folder, POLICY_DIR, ".hookrails-plugin"))
        if not (force and ours):
            why = "use --force to replace it" if ours else "it is not a hookrails plugin"
            raise SettingsError(f"the folder is not empty ({why})", file=folder)
        shutil.rmtree(folder)
    elif os.path.exists(folder) and not os.path.isdir(folder):
        raise SettingsError("exists and is not a folder", file=folder)
    definition = load_definition(config)
    plugin = _plugin_name(definition.name, name)
    base = os.path.dirname(os.path.abspath(config))
    extra, notes = _local_files(definition, base)
    if definition.ledger and not os.path.isabs(definition.ledger):
        notes.append(
            f"the definition's ledger: {definition.ledger} is relative to it, so the ledger "
            f"is written inside the plugin's {POLICY_DIR}/ folder; set $HOOKRAILS_LEDGER (or "
            "an absolute ledger:) to keep it elsewhere"
        )
    policy = os.path.join(folder, POLICY_DIR)
    os.makedirs(policy)
    shutil.copyfile(config, os.path.join(policy, os.path.basename(config)))
    for rel in extra:
        src, dst = os.path.join(base, rel), os.path.join(policy, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.isdir(src):
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copyfile(src, dst)
    with open(os.path.join(policy, ".hookrails-plugin"), "w", encoding="utf-8") as fh:
        fh.write("written by `hookrails claude plugin`; --force replaces this folder\n")
    ref = "${CLAUDE_PLUGIN_ROOT}/" + POLICY_DIR + "/" + os.path.basename(config)
    hooks: dict[str, list[Any]] = {}
    for event, group in _command_groups(_setup(config), ref, ("hookrails", True), ledger):
        hooks.setdefault(event, []).append(group)
    manifest = {
        "name": plugin,
        "version": __version__,
        "description": f"hookrails guardrails for {definition.name or 'this agent'}",
    }
    files: dict[str, dict[str, Any]] = {
        os.path.join(".claude-plugin", "plugin.json"): manifest,
        os.path.join("hooks", "hooks.json"): {
            "description": f"hookrails: {os.path.basename(config)}",
            "hooks": hooks,
        },
    }
    for rel, data in files.items():
        path = os.path.join(folder, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(_dump(data, path))
    written = sorted(
        os.path.relpath(os.path.join(d, f), folder)
        for d, _, fs in os.walk(folder)
        for f in fs
        if f != ".hookrails-plugin"
    )
    return PluginResult(folder, plugin, written, notes)
