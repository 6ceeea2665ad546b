"""ClassAds on the wire: HTCondor's JSON form, converted to and from ads in one place.

Ads are parsed with ``classad.parseOne(text, ParserType.JSON)`` and printed with
``printJson()``; without the ``classad`` package an ad stays its JSON object.
"""

from __future__ import annotations

import json

from daemoncore.wire.errors import BadRequest

MAX_ATTRIBUTES = 10_000


def ad_from_json(obj: object, where: str = "ad") -> object:
    """The ad for the JSON object ``obj``; ``where`` names it in errors (``$.ads[3]``).

    Raises:
        BadRequest: ``obj`` is not an object of attribute names to values, or the
            classad parser rejects it.
    """
    if not isinstance(obj, dict):
        raise BadRequest(f"{where}: a ClassAd must be a JSON object, got {type(obj).__name__}")
    if len(obj) > MAX_ATTRIBUTES:
        raise BadRequest(f"{where}: {len(obj)} attributes is more than the {MAX_ATTRIBUTES} allowed")
    parse = _classad_json_parser()
    if parse is None:
        return obj
    try:
        return parse(_json_text(obj))
    except Exception as exc:  # the parser's own error type is not ours to know
        raise BadRequest(f"{where}: not a valid JSON ClassAd: {exc}") from None


def ad_to_json(ad: object) -> dict:
    """The JSON object for ``ad`` (an ad from ``ad_from_json`` or a ``classad.ClassAd``)."""
    if isinstance(ad, dict):
        return ad
    return json.loads(ad.printJson())


def _json_text(obj: dict) -> str:
    """JSON text with every ``/`` written ``\\/``, the escape HTCondor writes around
    ``\\/Expr(...)\\/``; in JSON both spellings mean the same string."""
    return json.dumps(obj, ensure_ascii=False).replace("/", "\\/")


def _classad_json_parser():
    """``classad.parseOne`` bound to the JSON parser type, or ``None`` before it exists."""
    try:
        import classad
        parse_one, parser_type = classad.parseOne, classad.ParserType.JSON
    except (ImportError, AttributeError):
        return None
    return lambda text: parse_one(text, parser_type)
