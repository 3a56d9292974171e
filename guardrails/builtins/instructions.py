"""``reinject_instructions``: keep the definition's standing instructions in front of the
model when Claude Code compacts the conversation.

Compaction replaces the conversation with a summary, and the summary need not keep
what hooks told the model (a SessionStart's context, the rules of the definition). So
the hook gives the definition's ``instructions`` on every channel Claude reads around
a compaction (docs/builtins.md):

* **PreCompact**: as the compaction's custom instructions (Claude adds a PreCompact
  hook's output to them), asking the summary to carry the instructions word for word;
* **SessionStart** (``source`` ``compact``, and ``startup``/``clear``/``resume`` when its
  matcher lets them through): as context for the model (``additionalContext``), which
  Claude reads at the start of the compacted conversation.

PostCompact has no answer Claude reads, so the hook says nothing there. Nothing crosses
processes but the definition itself, which every ``hookrails hook`` process loads: the
turn the SessionStart starts (and its fresh injection budget) is the ledger's, as for
any prompt event (docs/design.md §7).
"""

from __future__ import annotations

from ..errors import DefinitionError, HookFailure
from ..results import HookResult

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["ReinjectInstructions", "reinject_instructions"]

_CONTEXT = "Standing instructions for this session (they hold after the conversation is compacted):"
_SUMMARY = (
    "The agent has standing instructions for the whole session. Copy them into the summary "
    "word for word under the heading 'Standing instructions', and keep following them:"
)


class ReinjectInstructions:
    """Give the definition's ``instructions`` (or ``text``) to the model at SessionStart
    and to the compaction at PreCompact, so they outlive a compacted conversation.

    Bind it on ``SessionStart`` (``matcher: compact`` for after compaction only; every
    source by default) and on ``PreCompact``. Without ``text`` the definition needs
    ``instructions:``; a Guard checks that at load.
    """

    hook_name = "reinject_instructions"

    def __init__(self, text: str | None = None) -> None:
        if text is not None and (not isinstance(text, str) or not text.strip()):
            raise ValueError(f"text must be non-empty or left out, got {text!r}")
        self.text = text

    def __repr__(self) -> str:
        return "ReinjectInstructions()" if self.text is None else "ReinjectInstructions(text=...)"

    def check_definition(self, definition: Any) -> None:
        """Nothing to reinject is a load-time error, not a silent no-op at compaction."""
        if self.text is None and not getattr(definition, "instructions", None):
            raise DefinitionError(
                "reinject_instructions has nothing to give: add `instructions:` to the "
                "definition or `with: {text: ...}` to the hook",
                loc=("instructions",),
            )

    def _instructions(self, ctx: Any) -> str:
        text = self.text or getattr(getattr(ctx, "definition", None), "instructions", None)
        if not text:
            raise HookFailure(
                "error",
                "reinject_instructions: the definition has no `instructions:` and the hook "
                "no `text`",
            )
        return str(text).strip()

    def __call__(self, event: Any, ctx: Any) -> HookResult | None:
        name = event.event_name
        if name == "SessionStart":
            return HookResult.inject(f"{_CONTEXT}\n{self._instructions(ctx)}")
        if name == "PreCompact":
            return HookResult.inject(f"{_SUMMARY}\n{self._instructions(ctx)}")
        return None


#: the ready instance: the definition's ``instructions``
reinject_instructions = ReinjectInstructions()
