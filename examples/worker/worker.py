"""The worker's half: one answer at a time, streamed with ``stream_chat`` into no element (a
worker has no document); ``poster(answer)`` posts each rendered update to the page, and the
end is posted as ``{type: "done", answer, outcome, detail}``."""

import asyncio

import js
from pyodide.ffi import to_js

from pysse.browser import stream_chat
from pysse.browser.remote import poster

calls = []
tasks = set()


def post(**message):
    js.postMessage(to_js(message, dict_converter=js.Object.fromEntries))


async def ask(answer, relay, body):
    try:
        calls[:] = [stream_chat(relay, body, on_update=poster(answer))]
        result = await calls[0]
        post(type="done", answer=answer, outcome=str(result.outcome), detail=result.detail)
    except Exception as exc:  # StreamChatError: a relay URL that is not http(s)...
        post(type="error", message=str(exc))


def on_message(data):
    if data.type == "ask":
        task = asyncio.ensure_future(ask(str(data.answer), str(data.relay), str(data.body)))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    elif data.type == "stop" and calls:
        calls[0].stop()
