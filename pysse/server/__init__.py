"""Server-side pysse (needs the ``serve`` extra; never shipped to the browser): the ASGI app
that serves the page and the demo relay (``app``), the reference relay that keeps API keys
server-side (``relay``), and the demo model (``demo``)."""
