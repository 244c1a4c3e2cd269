"""The page's view, as data: a model of the DOM that the page's Python reads and writes
(``dom.py``), recording each write as an op (``ops.py``) for the JavaScript view
(``web/view.js``) to apply once a frame, wherever the Python runs (a Web Worker or the main
thread). Pure Python: the page's logic runs against it in CPython tests as in the browser.

    dom.py       Document, Element, Event: the DOM API subset the page uses, and handles
    ops.py       the op vocabulary, recorded in order and taken a frame at a time
    select.py    the CSS selectors the model matches
    fragment.py  HTML -> nodes, as the browser builds them from the page's own HTML
"""

from __future__ import annotations

from .dom import Document, Element, Event, TextNode
from .ops import Ops

__all__ = ["Document", "Element", "Event", "Ops", "TextNode"]
