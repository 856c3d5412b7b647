"""ELAN annotation files (``.eaf``): the time-aligned annotations of each tier.

An ``.eaf`` is XML: ``TIME_ORDER`` lists time slots in milliseconds and each
``TIER`` holds ``ALIGNABLE_ANNOTATION`` elements that refer to two slots.  Each
such annotation with both slots timed becomes an annotation with
:attr:`Annotation.tier` the tier's id; ``REF_ANNOTATION`` elements (symbolic
annotations of dependent tiers, which have no times of their own) and
alignable annotations whose slots are not timed are skipped.  An ``.eaf``
carries no band, comment, generator or channel: annotations read are
time-only, get a uuid derived from their tier, position and content, generator ``""``
and channel ``None``.

Writing gives one top-level tier per :attr:`Annotation.tier` (``default`` for
annotations without one), in the order the tiers first appear, with a single
linguistic type.  ELAN counts whole milliseconds: times are rounded to the
millisecond, and a round trip keeps times to the millisecond and labels and tier
names exactly.

The file is parsed with :mod:`xml.etree.ElementTree`; a file that declares a
DOCTYPE or entities is refused, which rules out entity expansion attacks.
"""

from __future__ import annotations

import datetime
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError, shown
from ..files import atomic_write_bytes
from .common import Timebase, read_bytes
from .model import Annotation, stable_uuid

__all__ = ["DEFAULT_TIER", "is_eaf", "read_eaf", "write_eaf"]

#: the tier of annotations that have none
DEFAULT_TIER = "default"
_LINGUISTIC_TYPE = "default-lt"
_DECLARATION = re.compile(rb"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)


def is_eaf(head: str) -> bool:
    """True when the start of a file looks like an ELAN annotation document.

    Parameters
    ----------
    head : str
        The file's first bytes as text.

    Returns
    -------
    bool
        Whether it holds an ``ANNOTATION_DOCUMENT`` element.
    """
    return "<ANNOTATION_DOCUMENT" in head


def _line_of(raw: bytes, index: int) -> int:
    return raw.count(b"\n", 0, index) + 1


def _parse(path: Path) -> ET.Element:
    raw = read_bytes(path)
    declared = _DECLARATION.search(raw.replace(b"\0", b""))
    if declared is not None:
        line = _line_of(raw.replace(b"\0", b""), declared.start())
        raise InputError(f"{path}: line {line}: the file declares a DOCTYPE or entities, "
                         "which an ELAN file does not; refused")
    try:
        return ET.fromstring(raw)
    except ET.ParseError as exc:
        line = exc.position[0] if getattr(exc, "position", None) else 1
        raise InputError(f"{path}: line {line}: not well-formed XML "
                         f"({str(exc).split(':')[0]})") from None


def read_eaf(path: str | Path, timebase: Timebase | None = None) -> list[Annotation]:
    """The time-aligned annotations of an ELAN ``.eaf`` file.

    Parameters
    ----------
    path : str or Path
        The ``.eaf`` file.
    timebase : Timebase, optional
        Not needed by this format; accepted like the other readers.

    Returns
    -------
    list of Annotation
        Tier by tier in file order, each tier's annotations in file order.

    Raises
    ------
    InputError
        The file is not well-formed XML, declares a DOCTYPE or entities, is not
        an ELAN document, or an annotation refers to a missing time slot or
        ends before it starts; the message names the file and what is wrong.
    RecordingError
        The file is missing, unreadable or too large.
    """
    path = Path(path)
    root = _parse(path)
    if root.tag != "ANNOTATION_DOCUMENT":
        raise InputError(f"{path}: the root element is {shown(root.tag)}, not "
                         "ANNOTATION_DOCUMENT (not an ELAN file)")
    slots: dict[str, float | None] = {}
    for slot in root.iter("TIME_SLOT"):
        sid = slot.get("TIME_SLOT_ID")
        if sid is None:
            raise InputError(f"{path}: a TIME_SLOT has no TIME_SLOT_ID")
        value = slot.get("TIME_VALUE")
        if value is None:
            slots[sid] = None
            continue
        try:
            ms = float(value)
        except ValueError:
            raise InputError(f"{path}: TIME_SLOT {shown(sid)}: TIME_VALUE={shown(value)} is "
                             "not a number of milliseconds") from None
        slots[sid] = ms / 1000.0
    out: list[Annotation] = []
    for tier in root.iter("TIER"):
        name = tier.get("TIER_ID", "")
        for k, element in enumerate(tier.iter("ALIGNABLE_ANNOTATION")):
            aid = element.get("ANNOTATION_ID", "")
            what = f"tier {shown(name)}: annotation {shown(aid or str(k + 1))}"
            refs = (element.get("TIME_SLOT_REF1"), element.get("TIME_SLOT_REF2"))
            for ref in refs:
                if ref not in slots:
                    raise InputError(f"{path}: {what}: time slot {shown(ref)} is not in "
                                     "TIME_ORDER")
            start, stop = slots[refs[0]], slots[refs[1]]  # type: ignore[index]
            if start is None or stop is None:
                continue  # not aligned in time
            value = element.find("ANNOTATION_VALUE")
            label = (value.text or "") if value is not None else ""
            uid = stable_uuid("eaf", name, len(out), start, stop, label)
            try:
                out.append(Annotation(start, stop, label=label, uuid=uid, generator="",
                                      tier=name or None))
            except InputError as exc:
                raise InputError(f"{path}: {what}: "
                                 f"{str(exc).removeprefix('Annotation: ')}") from None
    return out


def write_eaf(path: str | Path, annotations: Sequence[Annotation],
              timebase: Timebase | None = None) -> Path:
    """Write an ELAN ``.eaf`` file (EAF 3.0), one top-level tier per annotation tier.

    Parameters
    ----------
    path : str or Path
        The file, written atomically.
    annotations : sequence of Annotation
        Times are rounded to the millisecond; only times, labels and tiers are written.
    timebase : Timebase, optional
        Not needed by this format; accepted like the other writers.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    InputError
        An item is not an :class:`Annotation`.
    RecordingError
        The file cannot be written.
    """
    path = Path(path)
    items = list(annotations)
    for a in items:
        if not isinstance(a, Annotation):
            raise InputError(f"expected Annotation objects, got {type(a).__name__}")
    tiers: dict[str, list[Annotation]] = {}
    for a in items:
        tiers.setdefault(DEFAULT_TIER if a.tier is None else a.tier, []).append(a)
    date = datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat()
    root = ET.Element("ANNOTATION_DOCUMENT", {
        "AUTHOR": "", "DATE": date, "FORMAT": "3.0", "VERSION": "3.0",
        "xmlns:xsi": "http://www.w3.org/2001/XMLSchema-instance",
        "xsi:noNamespaceSchemaLocation": "http://www.mpi.nl/tools/elan/EAFv3.0.xsd"})
    ET.SubElement(root, "HEADER", {"MEDIA_FILE": "", "TIME_UNITS": "milliseconds"})
    order = ET.SubElement(root, "TIME_ORDER")
    # one slot per distinct millisecond, in time order
    times = sorted({round(t * 1000) for a in items for t in (a.start_s, a.stop_s)})
    slot_of = {ms: f"ts{i}" for i, ms in enumerate(times, start=1)}
    for ms, sid in slot_of.items():
        ET.SubElement(order, "TIME_SLOT", {"TIME_SLOT_ID": sid, "TIME_VALUE": str(ms)})
    n = 0
    for name, tier_items in tiers.items():
        tier = ET.SubElement(root, "TIER", {"LINGUISTIC_TYPE_REF": _LINGUISTIC_TYPE,
                                            "TIER_ID": name})
        for a in sorted(tier_items, key=lambda a: (a.start_s, a.stop_s)):
            n += 1
            wrapper = ET.SubElement(tier, "ANNOTATION")
            element = ET.SubElement(wrapper, "ALIGNABLE_ANNOTATION", {
                "ANNOTATION_ID": f"a{n}", "TIME_SLOT_REF1": slot_of[round(a.start_s * 1000)],
                "TIME_SLOT_REF2": slot_of[round(a.stop_s * 1000)]})
            ET.SubElement(element, "ANNOTATION_VALUE").text = a.label
    ET.SubElement(root, "LINGUISTIC_TYPE", {"GRAPHIC_REFERENCES": "false",
                                            "LINGUISTIC_TYPE_ID": _LINGUISTIC_TYPE,
                                            "TIME_ALIGNABLE": "true"})
    header = root.find("HEADER")
    if header is not None:
        ET.SubElement(header, "PROPERTY", {"NAME": "lastUsedAnnotationId"}).text = str(n)
    ET.indent(root)
    data = ET.tostring(root, encoding="UTF-8", xml_declaration=True)
    atomic_write_bytes(path, data + b"\n")
    return path
