"""How an answer ended, as ``stream_chat``'s ``await call`` gives it: a plain record of what
the session and its ``ChatStream`` hold once the answer is over, apart from the call that
drives it."""

from __future__ import annotations

from dataclasses import dataclass

from ..events import Citation, Outcome, ProviderError, ToolCall, Usage
from .answer import AnswerSession

__all__ = ["ChatResult", "result_of"]


@dataclass(frozen=True)
class ChatResult:
    """How an answer ended. ``text`` is every delta, concatenated exactly (a continued answer:
    the whole joined text); ``outcome`` is ``completed`` only when the provider's own terminal
    signal arrived; ``detail`` says why in a sentence people can act on. ``reasoning``,
    ``tool_calls`` and ``citations`` are what the model streamed beside its text
    (``ChatStream``'s; a citation's URL is the provider's: link only ``linkable`` ones)."""

    text: str
    outcome: Outcome
    detail: str
    finish_reason: str | None
    usage: Usage | None
    error: ProviderError | None
    format: str | None
    answer_id: str
    resumes: int
    bytes: int
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    citations: tuple[Citation, ...] = ()


def result_of(session: AnswerSession) -> ChatResult:
    """The result of the answer ``session`` streamed (read once it has ended)."""
    cs = session.cs
    return ChatResult(
        text=session.text,
        outcome=Outcome(session.state),
        detail=session.note,
        finish_reason=cs.finish_reason,
        usage=cs.usage,
        error=cs.error,
        format=cs.detected_format,
        answer_id=session.answer_id,
        resumes=len(session.resumes),
        bytes=cs.bytes_fed,
        reasoning=cs.reasoning,
        tool_calls=cs.tool_calls,
        citations=cs.citations,
    )
