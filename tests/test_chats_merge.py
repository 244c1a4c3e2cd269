"""A chat written by several tabs is merged, never overwritten (``pysse.chats.merge``): property
tests over any interleaving of two tabs' questions, answers, versions and writes."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pysse.chats.conversation import Conversation
from pysse.chats.merge import absorb


class Store:
    """One stored copy and its stamp (what ``app.storage.ChatStore`` keeps), written as the
    store does: read, absorb if another tab wrote since, write."""

    def __init__(self) -> None:
        self.body: dict[str, Any] | None = None
        self.stamp = ""
        self.writes = 0

    def write(self, conv: Conversation) -> None:
        if self.body is not None and self.stamp != conv.stamp:
            absorb(conv, Conversation.from_json(self.body, strict=False))
        upto = conv.changes.n
        self.body = json.loads(json.dumps(conv.to_json()))
        self.writes += 1
        self.stamp = conv.stamp = f"w{self.writes}"
        conv.changes.forget(upto)


OPS = st.lists(
    st.tuples(
        st.sampled_from([0, 1]),
        st.sampled_from(["ask", "answer", "regenerate", "edit", "select", "rename", "write"]),
        st.integers(0, 50),
    ),
    max_size=40,
)


def apply(conv: Conversation, op: str, n: int, made: dict[str, str]) -> None:
    """One user action in a tab (every message made is noted in ``made``: id -> text)."""
    path = conv.path()
    last = path[-1] if path else None
    if op == "ask" and (last is None or last.role == "assistant"):
        msg = conv.add_user(f"q{n}-{conv.tag}")
    elif op == "answer" and last is not None and last.role == "user":
        msg = conv.start_answer(last.id)
        conv.finish(msg.id, f"a{n}-{conv.tag}", "completed")
    elif op == "regenerate" and any(m.role == "assistant" for m in path):
        olds = [m for m in path if m.role == "assistant"]
        msg = conv.regenerate(olds[n % len(olds)].id)
        conv.finish(msg.id, f"r{n}-{conv.tag}", "completed")
    elif op == "edit" and path:
        msg = conv.edit(path[0].id, f"e{n}-{conv.tag}")
    elif op == "select" and path:
        target = path[n % len(path)]
        siblings = conv.children[target.parent]
        conv.select(siblings[n % len(siblings)])
        return
    elif op == "rename":
        conv.rename(f"title {n}")
        return
    else:
        return
    made[msg.id] = conv.messages[msg.id].text


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_two_tabs_never_lose_a_message_whatever_the_interleaving(ops: list[Any]) -> None:
    store = Store()
    tabs = [Conversation("c", tag="aaaaaa"), Conversation("c", tag="bbbbbb")]
    made: dict[str, str] = {}
    for who, op, n in ops:
        if op == "write":
            store.write(tabs[who])
        else:
            apply(tabs[who], op, n, made)
    for tab in tabs:  # each tab writes what it has last
        store.write(tab)
    if store.body is None:
        assert made == {}
        return
    final = Conversation.from_json(store.body)  # (strict: the merged file is well formed)
    assert {m.id: m.text for m in final} == made  # every message made, exactly once
    path = final.path()
    assert path == [] or path[0].parent is None
    for msg in path[1:]:  # the shown path is a chain through the tree
        assert msg.parent in final.messages


def test_the_tab_that_changed_an_answer_last_wins_and_others_keep_their_own_changes() -> None:
    store = Store()
    a = Conversation("c", tag="aaaaaa")
    q = a.add_user("q")
    ans = a.start_answer(q.id)
    a.finish(ans.id, "partial", "streaming")
    store.write(a)
    b = Conversation.from_json(store.body)  # B opens the chat mid-answer
    b.stamp = store.stamp
    a.finish(ans.id, "the whole answer", "completed")
    store.write(a)
    b.rename("B's name")
    store.write(b)  # B never touched the answer: A's finished copy stays
    final = Conversation.from_json(store.body)
    assert final.messages[ans.id].text == "the whole answer"
    assert final.title == "B's name" and final.renamed
