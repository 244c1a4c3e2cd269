"""The bundled chat page's logic: pure Python against a model of its DOM (``pysse.view``) and
its ports (``platform``: the network, the chat store, a clock, frames). ``pysse.browser.host``
runs it in a Web Worker, or on the page's main thread; ``tests/model_page.py`` runs it in
CPython.

    app.py              the controller: the open chat, sending, Stop, the ticker, boot
    answers.py          what the page sends and what comes back: start, finish, queue, replays
    turn.py             one answer in the page: a ChatCall with its footer (status, speed)
    log_view.py         the messages on screen, their footers, the welcome screen
    actions.py          message actions: regenerate, continue, edit, versions, inspect
    chats.py            the chat list (drawer), export and import
    search_view.py      search across chats: the field, the results, opening one
    storage.py          chats and recordings through the platform's store (IndexedDB)
    restore.py          a restored chat's answers, rendered after they are on screen
    settings_form.py    the Settings panel and the theme
    inspector_panel.py  the stream inspector bound to its panel
    scroll.py           what happened, told to the view's scroll following
    platform.py         the ports, and the task helpers (spawn, run_sliced)
    ports.py            what each part needs of the others, as Protocols
"""
