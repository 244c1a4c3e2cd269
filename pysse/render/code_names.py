"""A code block's download name from its language: ``code.py`` for ``python``; ``.txt`` for a
language not listed. The extension comes from this table, never from the model's text, so a
name never holds a path separator, a second dot or a control character."""

from __future__ import annotations

__all__ = ["EXTENSIONS", "code_filename"]

# A fence's language (its info string's first word, lower case) -> the file's extension.
EXTENSIONS = {
    "python": "py", "py": "py", "python3": "py", "pycon": "txt", "javascript": "js", "js": "js",
    "mjs": "mjs", "jsx": "jsx", "typescript": "ts", "ts": "ts", "tsx": "tsx", "json": "json",
    "jsonc": "json", "html": "html", "xml": "xml", "svg": "svg", "css": "css", "scss": "scss",
    "bash": "sh", "sh": "sh", "shell": "sh", "zsh": "sh", "console": "txt", "powershell": "ps1",
    "ps1": "ps1", "bat": "bat", "rust": "rs", "rs": "rs", "go": "go", "golang": "go",
    "java": "java", "kotlin": "kt", "kt": "kt", "swift": "swift", "c": "c", "h": "h",
    "cpp": "cpp", "c++": "cpp", "cc": "cpp", "hpp": "hpp", "csharp": "cs", "cs": "cs",
    "c#": "cs", "ruby": "rb", "rb": "rb", "php": "php", "perl": "pl", "lua": "lua", "r": "r",
    "sql": "sql", "yaml": "yaml", "yml": "yaml", "toml": "toml", "ini": "ini",
    "markdown": "md", "md": "md", "latex": "tex", "tex": "tex", "diff": "diff",
    "patch": "diff", "csv": "csv", "tsv": "tsv", "haskell": "hs", "scala": "scala",
    "dart": "dart", "elixir": "ex", "erlang": "erl", "clojure": "clj", "julia": "jl",
    "matlab": "m", "makefile": "mk", "make": "mk", "dockerfile": "dockerfile",
    "graphql": "graphql", "proto": "proto", "vue": "vue", "svelte": "svelte", "zig": "zig",
    "nim": "nim", "ocaml": "ml", "fsharp": "fs", "vb": "vb", "asm": "asm", "wasm": "wat",
    "text": "txt", "txt": "txt", "plaintext": "txt", "mermaid": "mmd",
}  # fmt: skip


def code_filename(lang: str, stem: str = "code") -> str:
    """A code block's download name: ``code.py`` for ``python``, ``code.txt`` for a language
    not listed (never a path separator, a dot file or a control character: the extension
    comes from the table, never from the model's text)."""
    ext = EXTENSIONS.get(lang.strip().lower(), "txt")
    safe = "".join(c for c in stem if c.isalnum() or c in "-_")[:60] or "code"
    return f"{safe}.{ext}"
