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

from .state import Settler
from .structure import settle
from .tails import tails

__all__ = ["BlockSettler"]


class BlockSettler(Settler):
    """The open containers of one answer, and the ops that built them."""

    def settle(self, end: int, final: str | None = None) -> None:
        """Settle what the first ``end`` lines decide. ``final``: the text is complete and
        this is its last line (without a line feed; "" if the text ends with one)."""
        settle(self, end, final)

    def tails(self, partial: str) -> list[str]:
        """The unsettled HTML of each open container, with the partial last line held back.
        May settle pieces of a long paragraph and open one."""
        return tails(self, partial)
