"""Pages from their data through Jinja2 templates, autoescaping every value, so an ad's
markup (``<script>`` in a batch name) shows as text. Pure: data in, HTML out."""

from __future__ import annotations

import datetime
import os

import jinja2

from web.card_bar import BAR_WIDTH

TEMPLATES = os.path.join(os.path.dirname(__file__), "templates")

#: (URL, label) of every page, in the order the navigation shows them.
NAV = (("/pool", "Pool"), ("/gpus", "GPUs"), ("/queue", "Queue"), ("/fairshare", "Fair share"),
       ("/flocking", "Flocking"))

STATUS_WORDS = {1: "Idle", 2: "Running", 3: "Removed", 4: "Completed", 5: "Held", 6: "Transferring Output",
                7: "Suspended"}


def _isotime(seconds: object) -> str:
    if type(seconds) not in (int, float):
        return ""
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def environment() -> jinja2.Environment:
    """The template environment: autoescape on for every template, undefined names an error."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=False)
    env.filters["isotime"] = _isotime
    env.globals["bar_width"] = BAR_WIDTH
    return env


_ENV = environment()


def render_page(name: str, *, here: str, collector: str, fragment: bool = False, **values: object) -> str:
    """Page ``name`` (``pool``, ``job``...) with ``values``; only ``main``'s content when ``fragment``."""
    title = values.pop("title", None) or dict(NAV).get(here, name.title())
    context = {"title": title, "nav": NAV, "here": here, "collector": collector, "fragment": fragment,
               "refresh": values.pop("refresh", None), "problems": values.pop("problems", ()), **values}
    return _ENV.get_template(f"{name}.html").render(context)
