"""pytest plugin loaded with ``-p nbval_hooks`` (see pyproject.toml).

nbval compares every stored output.  Two MIME types can never be compared
meaningfully: glued PNG figures (bytes depend on freetype/platform) and
``text/latex`` (cannot be sanitized).  Everything else, including
``text/plain`` and ``text/html``, is still compared.
"""


def pytest_collectstart(collector):
    if getattr(collector, "path", None) is not None and collector.path.suffix == ".ipynb":
        collector.skip_compare += (
            "application/papermill.record/image/png",
            "text/latex",
        )
