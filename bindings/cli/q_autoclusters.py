"""``roost q -autocluster`` (condor_q -autocluster): the queue's jobs grouped into
autoclusters, jobs whose significant attributes are the same and so match alike. One
ad per autocluster, as condor_q gets them from the schedd's default autocluster set:
``AutoClusterId``, ``JobCount``, ``AutoClusterAttrs`` (the significant attributes, comma
separated) and those attributes as the autocluster's jobs hold them. ``-long``, ``-json``,
``-af`` and ``-format`` print these ads; the table shows one row per autocluster.

The grouping is the schedd's own (:func:`schedd.autocluster.build_autoclusters` with the
significant attributes of :func:`schedd.autocluster.significant_attributes` and the
pool's ``ADD_SIGNIFICANT_ATTRIBUTES``), done here over the ads the query answered.
Pure functions, apart from :func:`extra_significant`, which reads the configuration.
"""

from __future__ import annotations

from collections.abc import Iterable

import classad
from bindings.cli.status_format import plain_value
from schedd.autocluster import REQUEST_ATTRIBUTES, build_autoclusters, significant_attributes

#: the heading of the id and count columns, each ``%5d`` as condor_q prints counts
ID_HEADING, COUNT_HEADING = "   ID", "COUNT"
#: attributes shown last, being the longest (Requirements is left whole at the end)
LAST_COLUMNS = ("Rank", "Requirements")
_ORDER = {name.lower(): index for index, name in enumerate(REQUEST_ATTRIBUTES)}


def extra_significant() -> list[str]:
    """``ADD_SIGNIFICANT_ATTRIBUTES`` of this host's configuration, as the schedd adds
    them to what it groups jobs by; none when the configuration cannot be read."""
    from daemoncore.config import Config

    try:
        return Config.load().param_list("ADD_SIGNIFICANT_ATTRIBUTES", [])
    except Exception:  # no readable configuration: group by the built-in names alone
        return []


def _job_id(ad) -> str:
    return f"{plain_value(ad.eval('ClusterId'))}.{plain_value(ad.eval('ProcId'))}"


def _names_of(signature: tuple, representative) -> list[str]:
    """The representative's own spelling of the attribute names a signature holds (a
    gang's signature names none: its resource requests stand for it)."""
    keys = [part[0] for part in signature if isinstance(part, tuple)]
    if not keys:
        keys = [name.lower() for name in REQUEST_ATTRIBUTES]
    spelled = {key.lower(): key for key in representative.keys()}
    return [spelled[key] for key in keys if key in spelled]


def column_order(names: Iterable[str]) -> list[str]:
    """Attribute columns in a steady order: resource requests as the schedd lists them,
    then the rest by name, Rank and Requirements last."""
    last = {name.lower(): index for index, name in enumerate(LAST_COLUMNS)}

    def key(name: str) -> tuple:
        lower = name.lower()
        return (lower in last, last.get(lower, 0), _ORDER.get(lower, len(_ORDER)), lower)
    return sorted(set(names), key=key)


def autocluster_ads(jobs: Iterable, extra: Iterable[str] = ()) -> list:
    """One ad per autocluster of ``jobs`` (job ads with ClusterId and ProcId), numbered
    from 1 in the order of each autocluster's first job."""
    significant = significant_attributes((), extra=extra)
    clusters = build_autoclusters(((_job_id(ad), ad) for ad in jobs), significant)
    out = []
    for cluster in clusters:
        names = column_order(_names_of(cluster.signature, cluster.representative))
        ad = classad.ClassAd()
        ad["AutoClusterId"] = cluster.cluster_id
        ad["JobCount"] = cluster.count
        ad["AutoClusterAttrs"] = ",".join(names)
        for name in names:
            ad[name] = cluster.representative.lookup(name)
        out.append(ad)
    return out


def _cell(ad, name: str) -> str:
    """An attribute as the table shows it: a literal's value, an expression's text."""
    if name not in ad:
        return ""
    value = ad[name]
    return str(value) if isinstance(value, classad.ExprTree) else plain_value(value)


def autocluster_table(ads: list) -> list[str]:
    """The table: ID and COUNT right in five columns each, then one column per
    significant attribute any autocluster has (blank where one lacks it), each as wide
    as its widest cell (numbers to the right), the last left whole."""
    names = column_order(name for ad in ads for name in str(ad.get("AutoClusterAttrs", "")).split(",") if name)
    rows = [[_cell(ad, name) for name in names] for ad in ads]
    widths = [max([len(name), *(len(row[index]) for row in rows)]) for index, name in enumerate(names)]
    numeric = [all(_is_number(row[index]) for row in rows if row[index]) for index in range(len(names))]

    def line(first: str, second: str, cells: list[str], heading: bool = False) -> str:
        padded = [cell.rjust(width) if right and not heading else cell.ljust(width)
                  for cell, width, right in zip(cells, widths, numeric)]
        return " ".join([first, second, *padded]).rstrip()
    lines = [line(ID_HEADING, COUNT_HEADING, names, heading=True)]
    for ad, row in zip(ads, rows):
        lines.append(line(f"{plain_value(ad.eval('AutoClusterId')):>5}", f"{plain_value(ad.eval('JobCount')):>5}", row))
    return lines


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
