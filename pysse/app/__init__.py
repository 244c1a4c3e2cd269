"""The bundled chat page: pure Python against a model of its DOM (``pysse.view``) and its
ports (``platform``: the network, the chat store, a clock, frames), over the streaming call
(``pysse.call``) and the chats (``pysse.chats``). ``pysse.browser.host`` runs it in a Web
Worker, or on the page's main thread; ``tests/model_page.py`` runs it in CPython.

    app.py              the controller: the open chat, sending, Stop, the ticker, boot
    answers.py          what the page sends and what comes back: start, finish, queue, replays
    turn.py             one answer in the page: a ChatCall with its footer (status, speed)
    log_view.py         the messages on screen, their footers, the welcome screen
    message_view.py     what a message offers and says, a restored answer's reasoning
    actions.py          message actions: regenerate, continue, edit, versions, inspect
    chats.py            the chat list (drawer), export and import
    search_view.py      search across chats: the field, the results, opening one
    storage.py          chats and recordings through the platform's store (IndexedDB)
    restore.py          a restored chat's answers, rendered after they are on screen
    restore_steps.py    which restored answer next, in bounded steps, its cached HTML's key
    settings.py         the settings: defaults, the site's, a form value as a setting
    settings_form.py    the Settings panel and the theme
    site.py             site.json, checked where it enters
    next_request.py     the request a next message makes, as a template (and a first visit's)
    inspector_view.py   the stream inspector's views as HTML
    inspector_panel.py  the stream inspector bound to its panel
    scroll.py           what happened, told to the view's scroll following
    platform.py         the ports, and the task helpers (spawn, run_sliced)
    ports.py            what each part needs of the others, as Protocols
"""
