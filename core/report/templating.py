"""The jinja2 environment of anoneval's HTML: templates in ``core/report/templates``, autoescaped.

Every value a template prints is HTML-escaped unless it is :class:`markupsafe.Markup`; only
HTML that anoneval built from templates, and the fragments of ``report_section`` plugins (code
the user installed, see ``docs/security.md``), are marked safe.
"""

from __future__ import annotations

import functools
from typing import Any

import jinja2
from markupsafe import Markup, escape

TEMPLATES = "anoneval.core.report"


@functools.cache
def environment() -> jinja2.Environment:
    """The shared environment (autoescape on for ``.j2``/``.html``; strict undefined)."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader(TEMPLATES, "templates"),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "j2"),
                                            default_for_string=True),
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=True)


def render(template: str, **context: Any) -> Markup:
    """Render a template of ``core/report/templates`` to safe markup."""
    return Markup(environment().get_template(template).render(**context))


__all__ = ["Markup", "environment", "escape", "render"]
