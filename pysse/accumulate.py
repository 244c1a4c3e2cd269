"""Reasoning and tool-call deltas -> the whole blocks and calls of an answer (and its
citations, each once).

``ChatStream`` keeps one of these beside its text, so a UI (or a later turn) reads
``.reasoning``, ``.reasoning_blocks``, ``.tool_calls`` and ``.citations`` instead of
re-adding fragments; a page that stored the events can rebuild the same with an
``Accumulator`` of its own.
Pure and incremental: each delta costs O(1), the joins happen when read (and are cached).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .events import (
    ChatEvent,
    Citation,
    ReasoningBlock,
    ReasoningDelta,
    ToolCall,
    ToolCallDelta,
)

__all__ = ["Accumulator"]


@dataclass
class _Block:
    index: int
    parts: list[str] = field(default_factory=list)
    signature: str = ""
    redacted: bool = False
    data: str = ""

    def frozen(self) -> ReasoningBlock:
        self.parts[:] = ["".join(self.parts)] if self.parts else []  # the next join is O(new)
        text = self.parts[0] if self.parts else ""
        return ReasoningBlock(self.index, text, self.signature, self.redacted, self.data)


@dataclass
class _Call:
    index: int
    id: str | None = None
    name: str | None = None
    parts: list[str] = field(default_factory=list)

    def frozen(self) -> ToolCall:
        self.parts[:] = ["".join(self.parts)] if self.parts else []
        return ToolCall(self.index, self.id, self.name, self.parts[0] if self.parts else "")


MAX_CITATIONS = 1_000  # per answer: far above any provider's, far below what costs a page


class Accumulator:
    """Adds up reasoning and tool-call deltas, and collects citations (other events are
    ignored).

    A reasoning block is the run of deltas with one ``index``: a delta with another index
    starts the next block (Anthropic numbers content blocks, Responses output items, so a
    second thinking block always has a new index). A signature replaces the block's (the
    provider sends it whole); a redacted delta marks the block hidden and keeps its ``data``.
    Tool calls are keyed by ``index``: fragments of one call may be interleaved with other
    calls' and still land in their own call; ``id`` and ``name`` are the first ones given.
    A citation is kept once: providers repeat them (OpenAI Responses streams each annotation,
    then sends it again on the finished text; Gemini may repeat its grounding metadata). At
    most ``MAX_CITATIONS`` are kept, and later ones are not passed on: a broken or hostile
    stream cannot grow the list, nor what a page does with it each frame, without bound (a
    page shows at most 100 sources: ``events.sources``).
    """

    def __init__(self) -> None:
        self._reasoning: list[str] = []
        self._reasoning_text: str | None = ""
        self._blocks: list[_Block] = []
        self._blocks_frozen: tuple[ReasoningBlock, ...] | None = ()
        self._calls: dict[int, _Call] = {}
        self._calls_frozen: tuple[ToolCall, ...] | None = ()
        self._citations: dict[Citation, None] = {}  # a dict: ordered, and a repeat is found fast
        self._citations_frozen: tuple[Citation, ...] | None = ()

    def add(self, ev: ChatEvent) -> bool:
        """Add ``ev``; False if it changed nothing (a citation already kept, an empty delta),
        so ``ChatStream`` passes on only what is new."""
        if isinstance(ev, ReasoningDelta):
            self._add_reasoning(ev)
        elif isinstance(ev, ToolCallDelta):
            self._add_call(ev)
        elif isinstance(ev, Citation):
            if ev in self._citations or len(self._citations) >= MAX_CITATIONS:
                return False
            self._citations[ev] = None
            self._citations_frozen = None
        return True

    def _add_reasoning(self, ev: ReasoningDelta) -> None:
        if ev.empty:
            return
        if not self._blocks or self._blocks[-1].index != ev.index:
            self._blocks.append(_Block(ev.index))
        block = self._blocks[-1]
        if ev.text:
            block.parts.append(ev.text)
            self._reasoning.append(ev.text)
            self._reasoning_text = None
        if ev.signature:
            block.signature = ev.signature
        if ev.redacted:
            block.redacted = True
            block.data = ev.data or block.data
        self._blocks_frozen = None

    def _add_call(self, ev: ToolCallDelta) -> None:
        if ev.id is None and ev.name is None and not ev.arguments:
            return
        call = self._calls.get(ev.index)
        if call is None:
            call = self._calls[ev.index] = _Call(ev.index)
        call.id = call.id or ev.id
        call.name = call.name or ev.name
        if ev.arguments:
            call.parts.append(ev.arguments)
        self._calls_frozen = None

    @property
    def reasoning(self) -> str:
        """Every reasoning delta's text, concatenated exactly."""
        if self._reasoning_text is None:
            self._reasoning_text = "".join(self._reasoning)
            self._reasoning = [self._reasoning_text]
        return self._reasoning_text

    @property
    def reasoning_blocks(self) -> tuple[ReasoningBlock, ...]:
        """The reasoning blocks in the order they began (hidden ones included)."""
        if self._blocks_frozen is None:
            self._blocks_frozen = tuple(b.frozen() for b in self._blocks)
        return self._blocks_frozen

    @property
    def citations(self) -> tuple[Citation, ...]:
        """Each citation once, in the order they first came (at most ``MAX_CITATIONS``)."""
        if self._citations_frozen is None:
            self._citations_frozen = tuple(self._citations)
        return self._citations_frozen

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """Each tool call, whole so far, in the order the calls began."""
        if self._calls_frozen is None:
            self._calls_frozen = tuple(c.frozen() for c in self._calls.values())
        return self._calls_frozen
