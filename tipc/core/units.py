"""The one spelling of a wall time and of a byte count for people, used by every reporter.

`human_seconds`: `1.2s` under a minute, `2m05s` under an hour, `1h02m05s` beyond: compact enough for a
progress line or a table cell, exact to the second where seconds no longer matter, and the form that
`bench/` scripts read back. `human_bytes`: binary units with one decimal (`512 B`, `300.0 MiB`, `1.0 GiB`).
Both print `-` for a value that was not measured, the placeholder every table uses.
"""

from __future__ import annotations

UNKNOWN = "-"
_BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def human_seconds(s: float | None) -> str:
    """A wall time for people: `1.2s`, `2m05s`, `1h02m05s`; `-` when unknown."""
    if s is None:
        return UNKNOWN
    if s < 59.95:  # 59.96 s would print as 60.0s; from there on the minute form
        return f"{s:.1f}s"
    minutes, sec = divmod(round(s), 60)
    if minutes < 60:
        return f"{minutes}m{sec:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{sec:02d}s"


def human_bytes(n: float | None, *, significant: int | None = None) -> str:
    """A byte count for people: `512 B`, `3.0 MiB`; `-` when unknown.

    `significant` digits instead of one decimal (a chart's tick labels, which must tell close ticks apart).
    """
    if n is None:
        return UNKNOWN
    size = float(n)
    if abs(size) < 1024:
        return f"{size:.0f} B"
    for unit in _BYTE_UNITS[1:]:
        size /= 1024
        if abs(size) < 1024 or unit == _BYTE_UNITS[-1]:
            break
    return f"{size:.{significant}g} {unit}" if significant else f"{size:.1f} {unit}"
