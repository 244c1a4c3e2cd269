"""One answer's streaming call, for any page: pure Python, tested in CPython, run unchanged in
Pyodide. ``pysse.browser.stream_chat`` makes one for an embedder's element; the bundled page's
``Turn`` (``pysse.app.turn``) makes one per answer. It knows no conversation and no page.

    call.py          ChatCall: the network's sink, the answer's markdown, its frames
    answer.py        AnswerSession: what each fact from the network means, how it ended
    net.py           the Net port (the browser's is bridge.js), its timeouts and probe
    reconnect.py     when to resume a dropped answer, and when to give up
    continuation.py  a continued answer joined to its partial text
    diagnose.py      why a request failed, in words a person can act on
    request.py       what to send: the body in the chosen format, the relay URL, headers
    extras_view.py   reasoning and tool calls shown as they stream
    tool_args.py     a tool call's JSON arguments, pretty, while they stream
    speed.py         time to first token, tokens per second, a stall
"""
