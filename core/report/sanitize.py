"""Filtering the HTML fragments plugins add to a report down to harmless markup (an allow-list).

A ``report_section`` fragment is plugin code's output, and a plugin that pastes a value without
escaping it can inject markup. The page's Content-Security-Policy already stops scripts, but
not everything: Chromium ignores the ``navigate-to`` directive, so an injected
``<meta http-equiv="refresh">`` would navigate the report away, and ``<base>`` or ``<form>``
could redirect links and submissions. So a fragment keeps only the elements and attributes a
report needs (text formatting, lists, tables, figures, details, links, embedded images):

- ``<script>``, ``<style>``, ``<iframe>``, ``<object>``, ``<svg>``, ``<template>`` and the like
  are dropped with their content; any other element not allowed (``<meta>``, ``<base>``,
  ``<link>``, ``<form>``, ``<input>``, ``<button>``, ...) is dropped and its text kept;
- attributes are allowed by name (no ``on*`` handler, no ``http-equiv``, no ``action``,
  ``formaction`` or ``target``); a link's ``href`` must be ``#…``, ``http(s):`` or ``mailto:``,
  an image's ``src`` an embedded raster image (``data:image/png`` etc.), and ``style`` may not
  load anything (``url(``, ``@import``, ``expression(``);
- text is escaped again, comments and declarations are dropped, and elements left open are
  closed, so a fragment cannot break the page around it.
"""

from __future__ import annotations

import re
from html import escape
from html.parser import HTMLParser


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Elements a fragment may use (others are dropped, their text kept).
ALLOWED = _names(
    "a abbr b bdi bdo blockquote br caption cite code col colgroup data dd del details dfn div "
    "dl dt em figcaption figure h1 h2 h3 h4 h5 h6 hr i img ins kbd li mark ol p pre q s samp "
    "section small span strong sub summary sup table tbody td tfoot th thead time tr u ul var "
    "wbr")
#: Elements dropped with everything inside them.
DROPPED = _names(
    "script style template noscript iframe frame frameset object embed applet svg math "
    "textarea select option title head noembed noframes xmp audio video canvas")
VOID = _names("br col hr img wbr")
GLOBAL_ATTRS = _names("class id title lang dir role style")
ATTRS = {
    "a": {"href", "name"}, "img": {"src", "alt", "width", "height"},
    "td": {"colspan", "rowspan", "headers", "align"},
    "th": {"colspan", "rowspan", "headers", "scope", "abbr", "align"},
    "col": {"span", "width"}, "colgroup": {"span", "width"}, "details": {"open"},
    "ol": {"start", "reversed", "type"}, "li": {"value"}, "time": {"datetime"},
    "data": {"value"}, "table": {"summary"}, "tr": {"align"},
}
_HREF = re.compile(r"^(#|https?:|mailto:)", re.I)
_SRC = re.compile(r"^data:image/(png|jpeg|gif|webp);", re.I)
_STYLE_BAD = re.compile(r"url\s*\(|@import|expression\s*\(|javascript:|\\", re.I)
_SPACE = re.compile(r"[\x00-\x20]+")


def _allowed(tag: str, name: str, value: str | None) -> bool:
    if not (name in GLOBAL_ATTRS or name in ATTRS.get(tag, ())
            or name.startswith(("aria-", "data-"))):
        return False
    text = _SPACE.sub("", value or "")  # "java\tscript:" is "javascript:" to a browser
    if name == "href":
        return bool(_HREF.match(text))
    if name == "src":
        return bool(_SRC.match(text))
    if name == "style":
        return not _STYLE_BAD.search(value or "")
    return True


class _Filter(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.open: list[str] = []
        self.skipping: list[str] = []  # a dropped element and those of its kind inside it

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._start(tag, attrs, closed=False)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._start(tag, attrs, closed=True)

    def _start(self, tag: str, attrs: list[tuple[str, str | None]], closed: bool) -> None:
        if self.skipping:
            if tag == self.skipping[0] and not closed:
                self.skipping.append(tag)
            return
        if tag in DROPPED:
            if not closed:
                self.skipping.append(tag)
            return
        if tag not in ALLOWED:
            return
        kept = "".join(f" {name}" if value is None else f' {name}="{escape(value)}"'
                       for name, value in attrs if _allowed(tag, name, value))
        self.out.append(f"<{tag}{kept}>")
        if tag not in VOID:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if self.skipping:
            if tag == self.skipping[0]:
                self.skipping.pop()
            return
        if tag in self.open:
            while self.open:
                inner = self.open.pop()
                self.out.append(f"</{inner}>")
                if inner == tag:
                    break

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.out.append(escape(data, quote=False))


def sanitize_fragment(fragment: str) -> str:
    """``fragment`` with only allowed elements and attributes (see the module), as HTML."""
    parser = _Filter()
    parser.feed(fragment)
    parser.close()
    return "".join(parser.out) + "".join(f"</{tag}>" for tag in reversed(parser.open))


__all__ = ["ALLOWED", "DROPPED", "sanitize_fragment"]
