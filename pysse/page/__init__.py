"""The chat page's own logic, in pure Python: what a request looks like, the settings and their
defaults, and the inspector's views. The browser package binds these to the DOM; everything
here runs and is tested in CPython."""
