"""Continue a cut-off answer: what to send (each format's own way, ``Provider.continue_messages``)
and how the continuation is joined to the partial answer so the pieces read as one text, with
no repeated words and no lost space.

The partial answer is sent without its trailing whitespace (Anthropic refuses a final
assistant message that ends with it), so the model never saw that whitespace:

* a continuation that starts with whitespace brings its own (the model's choice wins);
* one that starts with a word gets the partial answer's whitespace back;
* a continuation that first repeats the end of the partial answer (models told to "continue"
  often restate the last words) has the repeated part dropped: the longest start of the
  continuation, at least ``MIN_OVERLAP`` characters, that the partial answer ends with.

To know whether it repeats, the start of the continuation is held until it either cannot be
a repeat any more (it is not found in the partial answer) or ``LOOKAHEAD`` characters came.
"""

from __future__ import annotations

__all__ = ["LOOKAHEAD", "MIN_OVERLAP", "Joiner", "overlap"]

MIN_OVERLAP = 8  # shorter repeats ("the", "and ") may be meant
LOOKAHEAD = 160  # characters held at most while deciding
_WINDOW = 4000  # how far back in the partial answer a repeat is looked for


def overlap(before: str, cont: str) -> int:
    """How many leading characters of ``cont`` repeat the end of ``before`` (0 if fewer than
    ``MIN_OVERLAP``)."""
    for k in range(min(len(before), len(cont)), MIN_OVERLAP - 1, -1):
        if before.endswith(cont[:k]):
            return k
    return 0


class Joiner:
    """Feeds a continuation's deltas, returns the text to append to the partial answer.

    ``base`` (the partial answer without trailing whitespace) is what the answer shows when
    the continuation starts; ``feed`` returns what to append after it (possibly "" while the
    start is held), ``close`` what is still held at the end of the stream."""

    def __init__(self, before: str) -> None:
        self.base = before.rstrip()
        self.gap = before[len(self.base) :]  # the whitespace the model did not see
        self._held = ""
        self.decided = False
        self.dropped = 0  # characters of repeated text removed (for tests and the inspector)

    def feed(self, delta: str) -> str:
        if self.decided:
            return delta
        self._held += delta
        start = self._held.lstrip()
        window = self.base[-_WINDOW:]
        if len(self._held) < LOOKAHEAD and (len(start) < MIN_OVERLAP or start in window):
            return ""  # may still be a repeat of the partial answer's end
        return self._decide()

    def close(self) -> str:
        return "" if self.decided else self._decide()

    def _decide(self) -> str:
        self.decided = True
        held, self._held = self._held, ""
        for cont in (held, held.lstrip()):
            k = overlap(self.base, cont)
            if k:
                self.dropped = len(held) - len(cont) + k
                return cont[k:]
        if held and not held[0].isspace():
            return self.gap + held
        return held
