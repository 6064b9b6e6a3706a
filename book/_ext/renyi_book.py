"""Three fixes to the HTML that Jupyter Book 1.x emits (a local Sphinx extension).

* sphinx-thebe (and sphinx-togglebutton) inline scripts reach each page twice, once
  with ``filename=None`` and once with ``filename=""``, which Sphinx's own
  de-duplication treats as different; so every page declared ``const THEBE_JS_URL``
  twice, a ``SyntaxError`` in the console.  Inline scripts with the same body are kept
  once.
* pydata-sphinx-theme leaves the colour mode empty unless ``default_mode`` is set, and
  then logs ``Got invalid theme mode`` as an error on every page.  Jupyter Book has no
  key for it, so it is set here (``light``; the reader's switch still works).
* The bibliography's labels are author-year (``Kutta et al. 2024``), like the citations
  in the text, instead of pybtex's alpha labels (``[KAD24]``).

* myst-nb's execution table (the reproducibility page) marks a chapter with emoji, which
  many machines have no font for; they are written as words.
* A reference to a package's public face (``renyi.audit.rdp_lower_bound``), or to a
  name a module imports (``Mechanism.target`` in ``renyi.mechanisms.catalogue``),
  resolves to the one place the API page documents the object: its defining module.

``tests/test_browser.py`` checks in Chromium that the console of every page stays clean.
"""

from __future__ import annotations


def _tidy_page(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if scripts:
        seen, unique = set(), []
        for script in scripts:
            # The copies differ only in filename None versus "" (both inline scripts).
            key = (
                getattr(script, "filename", str(script)) or "",
                repr(sorted(getattr(script, "attributes", {}).items())),
            )
            if key not in seen:
                seen.add(key)
                unique.append(script)
        scripts[:] = unique
    if not context.get("default_mode"):
        context["default_mode"] = "light"


#: The status marks of myst-nb's execution table, as words.
_MARKS = {"\u2705": "ok", "\u274c": "failed"}


def _marks_as_words(app, doctree, docname):
    from docutils import nodes

    for text in list(doctree.findall(nodes.Text)):
        if any(mark in text for mark in _MARKS):
            words = str(text)
            for mark, word in _MARKS.items():
                words = words.replace(mark, word)
            text.parent.replace(text, nodes.Text(words))


def _defining_module(app, env, node, contnode):
    """Resolve a reference that names an object by its package face or an import."""
    if node.get("refdomain") != "py" or node.get("reftype") == "mod":
        return None
    target = node["reftarget"].lstrip("~.")
    module = node.get("py:module") or ""
    objects = env.get_domain("py").objects
    prefixes = []
    if target.startswith("renyi."):
        parts = target.split(".")
        for cut in range(len(parts) - 1, 0, -1):  # the longest package prefix first
            prefixes.append((".".join(parts[:cut]), ".".join(parts[cut:])))
    elif module:
        parts = module.split(".")
        prefixes = [(".".join(parts[:cut]), target) for cut in range(len(parts), 1, -1)]
    domain = env.get_domain("py")
    for prefix, tail in prefixes:
        # at most one module level between the prefix and the name (its defining module)
        depth = prefix.count(".") + tail.count(".") + 2
        matches = [
            name
            for name in objects
            if name.startswith(prefix + ".")
            and name.endswith("." + tail)
            and name.count(".") <= depth
        ]
        if len(matches) == 1:
            kind, doc = node["reftype"], node["refdoc"]
            return domain.resolve_xref(
                env, doc, app.builder, kind, matches[0], node, contnode
            )
    return None


def setup(app):
    # After the themes' own html-page-context handlers (default priority 500).
    app.connect("html-page-context", _tidy_page, priority=900)
    app.connect("doctree-resolved", _marks_as_words)
    app.connect("missing-reference", _defining_module)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


# --- author-year labels in the bibliography, matching the citations in the text.
from pybtex.plugin import register_plugin  # noqa: E402
from pybtex.style.formatting.unsrt import Style as _UnsrtStyle  # noqa: E402
from pybtex.style.labels import BaseLabelStyle  # noqa: E402


def _last_name(person) -> str:
    from pybtex.richtext import Text

    parts = person.rich_prelast_names + person.rich_last_names
    return str(Text(*parts).render_as("text")).replace("{", "").replace("}", "")


class AuthorYearLabels(BaseLabelStyle):
    """``Kutta et al. 2024``, ``Askin and Dette 2022``, ``Mironov 2017``."""

    def format_labels(self, sorted_entries):
        for entry in sorted_entries:
            people = entry.persons.get("author") or entry.persons.get("editor") or []
            names = [_last_name(p) for p in people]
            if not names:
                who = entry.key
            elif len(names) == 1:
                who = names[0]
            elif len(names) == 2:
                who = f"{names[0]} and {names[1]}"
            else:
                who = f"{names[0]} et al."
            yield f"{who} {entry.fields.get('year', '')}".strip()


class AuthorYearStyle(_UnsrtStyle):
    default_label_style = "renyi_author_year"
    default_sorting_style = "author_year_title"


register_plugin("pybtex.style.labels", "renyi_author_year", AuthorYearLabels)
register_plugin("pybtex.style.formatting", "renyi_author_year", AuthorYearStyle)
