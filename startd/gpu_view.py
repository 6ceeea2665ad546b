"""Each GPU of the pool as slot ads show it: the card (from its partitionable or static
slot's nested card ad) and the pieces of it that jobs hold (from the claimed slots'
``AssignedGPUs``, ``AssignedGPUMemoryMb`` and ``AssignedGPUCores``).

Pure, over ClassAds: the startd's metrics read its own slot ads through it and
``roost status -gpus`` reads the collector's, so the two always agree.
"""

from __future__ import annotations

from collections.abc import Iterable

from attrs import frozen

import classad
from gpushare.placement import Card
from gpushare.slot_cards import cards_from_slot_ad, grants_from_slot_ad


@frozen
class CardShare:
    """A piece of one card held by the claimed slot ``slot``, running job ``job`` ("" while idle)."""

    slot: str
    job: str
    memory_mib: int
    cores: int
    whole: bool


@frozen
class CardView:
    """One card on host ``host`` and the shares of it that claims hold."""

    host: str
    card: Card
    shares: tuple[CardShare, ...] = ()

    @property
    def jobs(self) -> tuple[str, ...]:
        """The ids of the jobs running on a piece of the card, in slot order."""
        return tuple(share.job for share in self.shares if share.job)


def _text(ad: classad.ClassAd, attr: str) -> str:
    value = ad.get(attr)
    return value if type(value) is str else ""


def _is_dynamic(ad: classad.ClassAd) -> bool:
    return ad.get("DynamicSlot") is True or _text(ad, "SlotType") == "Dynamic"


def _holds_claim(ad: classad.ClassAd) -> bool:
    """A dynamic slot, or a static slot that is claimed: its cards are held."""
    return _is_dynamic(ad) or (ad.get("PartitionableSlot") is not True and _text(ad, "State") == "Claimed")


def job_of(ad: classad.ClassAd) -> str:
    """The job a slot runs, ``12.0`` (``JobId``, else cluster.proc of ``GlobalJobId``), or ""."""
    job = _text(ad, "JobId")
    if job:
        return job
    global_id = _text(ad, "GlobalJobId")  # schedd#12.0#1700000000
    parts = global_id.split("#")
    return parts[1] if len(parts) == 3 else ""


def card_views(slot_ads: Iterable[classad.ClassAd]) -> list[CardView]:
    """Every card of ``slot_ads``, by host then card index, each with its shares.

    Cards come from the slots that own them (partitionable and static); a dynamic
    slot's nested copies are not counted again. A share naming a card no slot
    describes is left out: the owner's ad has not arrived yet.
    """
    ads = list(slot_ads)
    cards: dict[tuple[str, str], Card] = {}
    for ad in ads:
        if not _is_dynamic(ad):
            for card in cards_from_slot_ad(ad):
                cards[(_text(ad, "Machine"), card.id)] = card
    shares: dict[tuple[str, str], list[CardShare]] = {}
    for ad in sorted((ad for ad in ads if _holds_claim(ad)), key=lambda ad: _text(ad, "Name")):
        for grant in grants_from_slot_ad(ad):
            share = CardShare(_text(ad, "Name"), job_of(ad), grant.memory_mib, grant.cores, grant.whole)
            shares.setdefault((_text(ad, "Machine"), grant.id), []).append(share)
    ordered = sorted(cards.items(), key=lambda item: (item[0][0], item[1].index, item[1].id))
    return [CardView(host, card, tuple(shares.get((host, card_id), ()))) for (host, card_id), card in ordered]
