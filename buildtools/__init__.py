"""Build-time helpers behind ``build.py``: never shipped, never imported by the page.

assets.py            the boot assets (.pyc zips, memory snapshot) and the page's manifest
compress.py          precompressed ``.br``/``.gz`` siblings, cached by content
pyodide_assets.mjs   the Node side: Pyodide compiles and snapshots itself
pyc_zip.py           run inside Pyodide: sources -> a .pyc-only zip
pyodide_node.py      Python code in Pyodide under Node, for the tests and benchmarks
snapshot_prepare.py  run inside Pyodide: what the snapshot holds
"""
