"""Build-time helpers behind ``build.py``: never shipped, never imported by the page.

assets.py            the boot assets (zips, lazy bundles, memory snapshot), cached by content
compress.py          precompressed ``.br``/``.gz`` siblings, cached by content; brotli 11 for serve
pyodide_assets.mjs   the Node side: Pyodide traces, lays out and snapshots itself
trace_imports.py     run inside Pyodide: what the page can import, what each lazy resource adds
layout.py            run inside Pyodide: the boot zips and lazy bundles, bytecode or sources
patches.py           build-time patches to third-party wheels (latex2mathml's imports)
pyodide_node.py      Python code in Pyodide under Node, for the tests and benchmarks
snapshot_prepare.py  run inside Pyodide: what the snapshot holds
"""
