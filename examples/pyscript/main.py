# The minimal example's Python under PyScript: pysse is already installed (pyscript.json's
# "packages"), and @when binds the buttons.
from pyscript import document, when

from pysse.browser import stream_chat

calls = []


def el(name):
    return document.getElementById(name)


@when("click", "#ask")
async def ask(_event):
    el("ask").disabled, el("stop").disabled = True, False
    el("status").textContent = "Streaming…"
    el("answer").replaceChildren()
    body = {
        "model": "gpt-4o-mini",
        "stream": True,
        "messages": [{"role": "user", "content": el("prompt").value}],
    }
    try:
        calls[:] = [stream_chat(el("relay").value, body, into=el("answer"))]
        result = await calls[0]
        el("status").textContent = f"{result.outcome}: {result.detail}"
    except Exception as exc:  # StreamChatError: a relay URL that is not http(s)...
        el("status").textContent = f"Error: {exc}"
    el("ask").disabled, el("stop").disabled = False, True


@when("click", "#stop")
def stop(_event):
    calls[0].stop()


el("ask").disabled = False
el("status").textContent = "Ready."
