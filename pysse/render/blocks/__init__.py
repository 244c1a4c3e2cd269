"""Block structure, settled incrementally: the open containers of a growing answer (the
invariants that make it exact and linear are in the package docstring, ``pysse.render``).

One job per module, as markdown-it splits ``rules_block/``:

* ``boxes.py``: an open container (:class:`~.boxes.Box`), one partial parse, opener lines;
* ``state.py``: what the settler holds, and the partial parse every job shares;
* ``structure.py``: the structure pass (settle, close, open);
* ``tails.py``: the unsettled end of each open container, on every update;
* ``lists.py``: tightness, task lists, and replacing a list that turned out different;
* ``fences.py``: code lines, and highlighting jobs;
* ``paragraphs.py``: a long paragraph as an open container.
"""

from __future__ import annotations

from ..budget import Budget
from . import structure, tails
from .state import Settler

__all__ = ["BlockSettler"]


class BlockSettler(Settler):
    """The open containers of one answer, and the ops that built them."""

    def settle(self, end: int, final: str | None = None, budget: Budget | None = None) -> bool:
        """Settle what the first ``end`` lines decide (``structure.settle``). ``final``: the
        text is complete and this is its last line. False if the ``budget`` ran out first."""
        return structure.settle(self, end, final, budget)

    def tails(self, partial: str, budget: Budget | None = None) -> list[str] | None:
        """The unsettled HTML of each open container, with the partial last line held back
        (``tails.tails``); None if a replacement it started needs more than the budget."""
        return tails.tails(self, partial, budget)

    @property
    def behind(self) -> bool:
        """Complete lines are not settled yet (a replacement is being prepared)."""
        return self.reached < len(self.lines)
