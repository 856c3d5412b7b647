"""Praat TextGrids: interval and point tiers, in the long and the short text format.

Reading takes both text formats Praat writes (``Save as text file`` and
``Save as short text file``), in UTF-8 (with or without BOM) or UTF-16 with a
BOM (what Praat writes when a text is not ASCII).  Each labelled interval of an
interval tier becomes an annotation with :attr:`Annotation.tier` the tier's
name; empty intervals (label ``""``) are Praat's gaps and are not read.  Each
point of a point tier (``TextTier``) becomes a point annotation
(``start_s == stop_s``), whatever its label.  A TextGrid carries no band,
comment, uuid, generator or channel: annotations read are time-only, get a uuid
derived from their tier, position and content, generator ``""`` and channel
``None``.  The grid's own span is kept in :attr:`Annotation.extra`
(``textgrid_xmin``, ``textgrid_xmax``) for writing it back.

Bad input (an unreadable token, intervals of one tier that overlap, a tier that
runs past the recording when its length is known) raises one
:class:`~specscope.compute.errors.InputError` naming the file's line; nothing is
returned then.

Writing gives one tier per :attr:`Annotation.tier`, in the order the tiers first
appear; a tier of intervals is filled with empty intervals so that it covers the
grid from its start (0, the recording's first sample) to its end (the
recording's length when known, else the last annotation's end).  Annotations
without a tier go to an interval tier ``annotations`` (overlapping ones to
``annotations 2``, ...) and, the points, to a point tier ``points``.  Times are
written in Python's shortest round-trip form, so a round trip is exact.  An
interval annotation with an empty label is written as a gap and so is not read
back; a named tier that holds both intervals and points, or overlapping
intervals, cannot be written.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError, shown
from ..files import atomic_write_text
from .common import Timebase, read_bytes
from .model import Annotation, stable_uuid

__all__ = ["is_textgrid", "read_textgrid", "write_textgrid"]

#: the tier of annotations that have none, and of such points
DEFAULT_TIER = "annotations"
DEFAULT_POINT_TIER = "points"
#: the words of the long text format (Praat's field names)
_WORDS = frozenset({"File", "type", "Object", "class", "xmin", "xmax", "tiers?", "size", "item",
                    "name", "intervals", "points", "number", "mark", "text"})
_INTERVAL = "IntervalTier"
_POINT = "TextTier"
_TOKEN = re.compile(r'''
    (?P<string>"(?:[^"]|"")*")
  | (?P<flag><[A-Za-z]+>)
  | (?P<number>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(?![A-Za-z_])
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*\??)
  | (?P<skip>\[[^\]\n]*\]|![^\n]*|[\s=:]+)
''', re.VERBOSE)


def _decode(raw: bytes) -> str:
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


def is_textgrid(path: Path) -> bool:
    """True when a file starts like a Praat text TextGrid (UTF-8 or UTF-16).

    Parameters
    ----------
    path : Path
        The file.

    Returns
    -------
    bool
        False too when the file cannot be read.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(512)
    except OSError:
        return False
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = head[:len(head) // 2 * 2].decode("utf-16", errors="replace")
    else:
        text = head.decode("utf-8", errors="replace")
    return "ooTextFile" in text and "TextGrid" in text


class _Tokens:
    """The numbers, texts and flags of a TextGrid, each with its line number."""

    def __init__(self, text: str, where: str) -> None:
        self.where = where
        self.items: list[tuple[str, str, int]] = []
        starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.last_line = text.rstrip().count("\n") + 1
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            line = bisect.bisect_right(starts, pos)
            if m is None:
                what = ("a text whose closing quote is missing" if text[pos] == '"'
                        else f"unreadable text {shown(text[pos:pos + 20].split(chr(10))[0])}")
                raise InputError(f"{where}: line {line}: {what}")
            kind = m.lastgroup or "skip"
            if kind == "word" and m.group() not in _WORDS:
                raise InputError(f"{where}: line {line}: unreadable text {shown(m.group())}")
            if kind not in ("skip", "word"):
                self.items.append((kind, m.group(), line))
            pos = m.end()
        self.i = 0

    def _next(self, want: str, what: str) -> tuple[str, int]:
        if self.i >= len(self.items):
            raise InputError(f"{self.where}: line {self.last_line}: the file ends where "
                             f"{what} should be")
        kind, value, line = self.items[self.i]
        if kind != want:
            raise InputError(f"{self.where}: line {line}: expected {what}, got {shown(value)}")
        self.i += 1
        return value, line

    def text(self, what: str) -> tuple[str, int]:
        value, line = self._next("string", f"{what} (a quoted text)")
        return value[1:-1].replace('""', '"'), line

    def number(self, what: str) -> tuple[float, int]:
        value, line = self._next("number", f"{what} (a number)")
        return float(value), line

    def count(self, what: str) -> tuple[int, int]:
        value, line = self._next("number", f"{what} (a whole number)")
        x = float(value)
        if not x.is_integer() or x < 0:
            raise InputError(f"{self.where}: line {line}: {what}: {shown(value)} must be a "
                             "whole number >= 0")
        return int(x), line

    def flag(self, what: str) -> tuple[str, int]:
        return self._next("flag", what)


def _check_end(where: str, line: int, tier: str, end: float, duration: float | None,
               tolerance: float) -> None:
    if duration is not None and end > duration + tolerance:
        raise InputError(f"{where}: line {line}: tier {shown(tier)} runs to {end!r} s, past the "
                         f"end of the recording ({duration!r} s)")


def read_textgrid(path: str | Path, timebase: Timebase | None = None) -> list[Annotation]:
    """The labelled intervals and the points of a TextGrid.

    Parameters
    ----------
    path : str or Path
        The TextGrid (long or short text format).
    timebase : Timebase, optional
        With the recording's length and sample rate, a tier that runs past
        the recording's end (by more than a sample) is refused.

    Returns
    -------
    list of Annotation
        Tier by tier in file order, each tier's items in file order.

    Raises
    ------
    InputError
        The file is not a text TextGrid, a token cannot be read, a tier or
        interval ends before it starts, intervals of a tier overlap, or a tier
        runs past the recording; the message names the file and the line.
    RecordingError
        The file is missing, unreadable or too large.
    """
    path = Path(path)
    tb = timebase or Timebase()
    duration = tb.duration_s
    tolerance = 1.0 / tb.sample_rate if tb.sample_rate else 0.0
    text = _decode(read_bytes(path)).replace("\r\n", "\n").replace("\r", "\n")
    where = str(path)
    tok = _Tokens(text, where)
    file_type, line = tok.text("the file type")
    if file_type not in ("ooTextFile", "ooTextFile short"):
        raise InputError(f"{where}: line {line}: file type {shown(file_type)} is not a Praat "
                         "text file (save the TextGrid as a text or short text file)")
    cls, line = tok.text("the object class")
    if cls != "TextGrid":
        raise InputError(f"{where}: line {line}: object class {shown(cls)} is not TextGrid")
    xmin, _ = tok.number("xmin")
    xmax, line = tok.number("xmax")
    if xmax < xmin:
        raise InputError(f"{where}: line {line}: xmax {xmax!r} is before xmin {xmin!r}")
    exists, line = tok.flag("<exists> or <absent>")
    if exists not in ("<exists>", "<absent>"):
        raise InputError(f"{where}: line {line}: expected <exists> or <absent>, got "
                         f"{shown(exists)}")
    n_tiers = tok.count("the number of tiers")[0] if exists == "<exists>" else 0
    extra = {"textgrid_xmin": xmin, "textgrid_xmax": xmax}
    out: list[Annotation] = []
    for t in range(1, n_tiers + 1):
        kind, line = tok.text(f"the class of tier {t}")
        if kind not in (_INTERVAL, _POINT):
            raise InputError(f"{where}: line {line}: tier {t} is a {shown(kind)}; expected "
                             f"{_INTERVAL} or {_POINT}")
        name, _ = tok.text(f"the name of tier {t}")
        t_min, _ = tok.number(f"xmin of tier {t}")
        t_max, line = tok.number(f"xmax of tier {t}")
        if t_max < t_min:
            raise InputError(f"{where}: line {line}: tier {shown(name)} ends ({t_max!r} s) "
                             f"before it starts ({t_min!r} s)")
        _check_end(where, line, name, t_max, duration, tolerance)
        n, _ = tok.count(f"the number of items of tier {shown(name)}")
        previous_end = None
        for k in range(1, n + 1):
            what = f"{'interval' if kind == _INTERVAL else 'point'} {k} of tier {shown(name)}"
            if kind == _INTERVAL:
                start, line = tok.number(f"xmin of {what}")
                stop, stop_line = tok.number(f"xmax of {what}")
                label, _ = tok.text(f"the text of {what}")
                if stop < start:
                    raise InputError(f"{where}: line {stop_line}: {what} ends ({stop!r} s) "
                                     f"before it starts ({start!r} s)")
                if previous_end is not None and start < previous_end:
                    raise InputError(f"{where}: line {line}: {what} starts at {start!r} s, "
                                     f"before the interval before it ends ({previous_end!r} s); "
                                     "intervals of a tier must not overlap")
                previous_end = stop
                _check_end(where, stop_line, name, stop, duration, tolerance)
                if label == "":
                    continue  # a gap
            else:
                start, line = tok.number(f"the time of {what}")
                label, _ = tok.text(f"the mark of {what}")
                stop = start
                _check_end(where, line, name, stop, duration, tolerance)
            uid = stable_uuid("textgrid", name, len(out), start, stop, label)
            try:
                out.append(Annotation(start, stop, label=label, uuid=uid, generator="",
                                      tier=name or None, extra=extra))
            except InputError as exc:
                raise InputError(f"{where}: line {line}: {what}: "
                                 f"{str(exc).removeprefix('Annotation: ')}") from None
    return out


def _num(x: float) -> str:
    x = float(x)
    return str(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _layer(items: list[Annotation]) -> list[list[Annotation]]:
    """Intervals laid on as few tiers as keep each tier free of overlaps, in time order."""
    layers: list[list[Annotation]] = []
    for a in sorted(items, key=lambda a: (a.start_s, a.stop_s)):
        for layer in layers:
            if layer[-1].stop_s <= a.start_s:
                layer.append(a)
                break
        else:
            layers.append([a])
    return layers


def _tiers(path: Path, annotations: Sequence[Annotation]
           ) -> list[tuple[str, str, list[Annotation]]]:
    """(class, name, items in time order) of each tier to write."""
    named: dict[str, list[Annotation]] = {}
    loose: list[Annotation] = []
    loose_points: list[Annotation] = []
    for a in annotations:
        if a.tier is not None:
            named.setdefault(a.tier, []).append(a)
        elif a.start_s == a.stop_s:
            loose_points.append(a)
        else:
            loose.append(a)
    tiers: list[tuple[str, str, list[Annotation]]] = []
    for name, items in named.items():
        points = [a.start_s == a.stop_s for a in items]
        if all(points):
            tiers.append((_POINT, name, sorted(items, key=lambda a: a.start_s)))
            continue
        if any(points):
            raise InputError(f"{path}: tier {shown(name)} holds both intervals and points; a "
                             "TextGrid tier holds one kind (give the points another tier)")
        layers = _layer(items)
        if len(layers) > 1:
            a, b = _first_overlap(items)
            raise InputError(f"{path}: tier {shown(name)}: annotations {shown(a.label)} "
                             f"({a.start_s!r}-{a.stop_s!r} s) and {shown(b.label)} "
                             f"({b.start_s!r}-{b.stop_s!r} s) overlap; a TextGrid tier cannot "
                             "hold overlapping intervals")
        tiers.append((_INTERVAL, name, layers[0]))
    taken = set(named)
    for i, layer in enumerate(_layer(loose), start=1):
        name = DEFAULT_TIER if i == 1 else f"{DEFAULT_TIER} {i}"
        while name in taken:
            name += "'"
        taken.add(name)
        tiers.append((_INTERVAL, name, layer))
    if loose_points:
        name = DEFAULT_POINT_TIER
        while name in taken:
            name += "'"
        tiers.append((_POINT, name, sorted(loose_points, key=lambda a: a.start_s)))
    return tiers


def _first_overlap(items: list[Annotation]) -> tuple[Annotation, Annotation]:
    ordered = sorted(items, key=lambda a: (a.start_s, a.stop_s))
    for a, b in itertools.pairwise(ordered):
        if b.start_s < a.stop_s:
            return a, b
    return ordered[0], ordered[-1]  # not reached: _layer found an overlap


def _stored(annotations: Sequence[Annotation], key: str) -> list[float]:
    out = []
    for a in annotations:
        v = a.extra.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out.append(float(v))
    return out


def write_textgrid(path: str | Path, annotations: Sequence[Annotation],
                   timebase: Timebase | None = None, *, short: bool = False,
                   encoding: str = "utf-8") -> Path:
    """Write a TextGrid (see the module notes for tiers, gaps and the grid's span).

    Parameters
    ----------
    path : str or Path
        The TextGrid, written atomically.
    annotations : sequence of Annotation
        The intervals and points; frequencies, comments, uuids, generators and
        channels are not written (a TextGrid has no place for them).
    timebase : Timebase, optional
        With the recording's length, the grid ends at the recording's end.
    short : bool
        Praat's short text format instead of the long one.
    encoding : {"utf-8", "utf-16"}
        UTF-16 is written with a BOM, as Praat does.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    InputError
        An item is not an :class:`Annotation`, a named tier holds both intervals
        and points or overlapping intervals, or the encoding is not one of the two.
    RecordingError
        The file cannot be written.
    """
    path = Path(path)
    if encoding.lower().replace("_", "-") not in ("utf-8", "utf-16"):
        raise InputError(f"encoding={encoding!r} must be 'utf-8' or 'utf-16'")
    items = list(annotations)
    for a in items:
        if not isinstance(a, Annotation):
            raise InputError(f"expected Annotation objects, got {type(a).__name__}")
    tiers = _tiers(path, items)
    duration = (timebase or Timebase()).duration_s
    stored = _stored(items, "textgrid_xmin")
    xmin = min([min(stored) if stored else 0.0] + [a.start_s for a in items])
    ends = _stored(items, "textgrid_xmax") + [a.stop_s for a in items] + [xmin]
    xmax = max(ends + ([] if duration is None else [duration]))
    lines = ['File type = "ooTextFile"', 'Object class = "TextGrid"', ""]
    if short:
        lines += [_num(xmin), _num(xmax), "<exists>" if tiers else "<absent>"]
        if tiers:
            lines.append(str(len(tiers)))
    else:
        lines += [f"xmin = {_num(xmin)} ", f"xmax = {_num(xmax)} "]
        if tiers:
            lines += ["tiers? <exists> ", f"size = {len(tiers)} ", "item []: "]
        else:
            lines.append("tiers? <absent> ")
    for t, (kind, name, tier_items) in enumerate(tiers, start=1):
        rows: list[tuple[float, ...] | tuple[float, float, str]] = []
        if kind == _INTERVAL:
            at = xmin
            for a in tier_items:
                if a.start_s > at:
                    rows.append((at, a.start_s, ""))
                rows.append((a.start_s, a.stop_s, a.label))
                at = a.stop_s
            if at < xmax:
                rows.append((at, xmax, ""))
        else:
            rows = [(a.start_s, a.label) for a in tier_items]  # type: ignore[misc]
        if short:
            lines += [_quoted(kind), _quoted(name), _num(xmin), _num(xmax), str(len(rows))]
            for row in rows:
                lines += [_num(v) for v in row[:-1]] + [_quoted(str(row[-1]))]
            continue
        group = "intervals" if kind == _INTERVAL else "points"
        lines += [f"    item [{t}]:", f"        class = {_quoted(kind)} ",
                  f"        name = {_quoted(name)} ", f"        xmin = {_num(xmin)} ",
                  f"        xmax = {_num(xmax)} ", f"        {group}: size = {len(rows)} "]
        for k, row in enumerate(rows, start=1):
            lines.append(f"        {group} [{k}]:")
            if kind == _INTERVAL:
                lines += [f"            xmin = {_num(row[0])} ",
                          f"            xmax = {_num(row[1])} ",
                          f"            text = {_quoted(str(row[2]))} "]
            else:
                lines += [f"            number = {_num(row[0])} ",
                          f"            mark = {_quoted(str(row[1]))} "]
    atomic_write_text(path, "\n".join(lines) + "\n", encoding=encoding)
    return path
