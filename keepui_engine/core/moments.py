"""Times users give (--since, --until, --as-of): ISO-8601 dates, date-times and durations,
refused outside EARLIEST..LATEST."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

from keepui_engine.core.errors import UsageError

_DURATION = re.compile(
    r"^P(?:(?P<y>\d+(?:\.\d+)?)Y)?(?:(?P<mo>\d+(?:\.\d+)?)M)?(?:(?P<w>\d+(?:\.\d+)?)W)?"
    r"(?:(?P<d>\d+(?:\.\d+)?)D)?(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<mi>\d+(?:\.\d+)?)M)?"
    r"(?:(?P<s>\d+(?:\.\d+)?)S)?)?$",
    re.IGNORECASE,
)


# Times keepui takes (--since, --until, --as-of): wide enough for any store, and far enough
# from datetime's year 1 and 9999 that local-time conversions and date arithmetic never fail.
EARLIEST = datetime(1900, 1, 1, tzinfo=UTC)
LATEST = datetime(9998, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)


def _out_of_range(raw: str, option: str) -> UsageError:
    return UsageError(
        f"{option} {raw!r} is out of range: give a moment from {EARLIEST:%Y-%m-%d} to "
        f"{LATEST:%Y-%m-%d}, or a duration that reaches back no further than "
        f"{EARLIEST:%Y-%m-%d} (P30D, PT12H)."
    )


def _within(dt: datetime, raw: str, option: str) -> datetime:
    if not EARLIEST <= dt <= LATEST:
        raise _out_of_range(raw, option)
    return dt


def _iso(text: str) -> date | datetime:
    """An ISO-8601 date (exactly YYYY-MM-DD) or date-time (`Z` or `z` for UTC).

    Raises:
        ValueError: It is neither.
    """
    if len(text) == 10:
        return date.fromisoformat(text)
    return datetime.fromisoformat(text.replace("z", "Z").replace("Z", "+00:00"))


def parse_time(raw: str, *, now: datetime | None = None, option: str = "--since") -> datetime:
    """Parse an ISO-8601 date, datetime or duration (P7D, PT1H: that long before now) to UTC.

    Raises:
        UsageError: The text is none of those, or names a moment before EARLIEST or after
            LATEST.
    """
    now = now or datetime.now(UTC)
    text = raw.strip()
    m = _DURATION.match(text)
    if m and any(m.groupdict().values()):
        g = {k: float(v) if v else 0.0 for k, v in m.groupdict().items()}
        try:
            span = timedelta(
                days=g["y"] * 365 + g["mo"] * 30 + g["w"] * 7 + g["d"],
                hours=g["h"],
                minutes=g["mi"],
                seconds=g["s"],
            )
            return _within(now - span, raw, option)
        except OverflowError:  # P999999999D: more days than a timedelta holds
            raise _out_of_range(raw, option) from None
    try:
        dt = _iso(text)
    except ValueError:
        raise UsageError(
            f"{option} {raw!r} is not an ISO-8601 date (2026-11-01), datetime "
            "(2026-11-01T09:30) or duration (P7D, PT1H)."
        ) from None
    if not isinstance(dt, datetime):  # a date: its start, in UTC
        return _within(datetime(dt.year, dt.month, dt.day, tzinfo=UTC), raw, option)
    if not 1 < dt.year < 9999:  # before converting: year 1 with +01:00 cannot convert
        raise _out_of_range(raw, option)
    return _within(dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC), raw, option)


def parse_moment(raw: str, *, option: str = "--as-of") -> datetime:
    """A moment for --as-of, as naive UTC: an ISO date (the end of that day) or date-time,
    in local time unless it names a zone; a duration (P7D) means that long ago.

    Raises:
        UsageError: The text is none of those.
    """
    text = raw.strip()
    m = _DURATION.match(text)
    if m and any(m.groupdict().values()):
        return parse_time(text, option=option).replace(tzinfo=None)
    try:
        found = _iso(text)
        local = (
            found
            if isinstance(found, datetime)
            else datetime(found.year, found.month, found.day, 23, 59, 59, 999999)
        )
    except ValueError:
        raise UsageError(
            f"{option} {raw!r} is not an ISO-8601 date (2026-10-01: the end of that day) or "
            "date-time (2026-10-01T09:30, local time unless it ends in Z or +HH:MM)."
        ) from None
    if not 1 < local.year < 9999:  # local time in year 1 or 9999 may not convert
        raise _out_of_range(raw, option)
    return _within(local.astimezone(UTC), raw, option).replace(tzinfo=None)


def iso(dt: datetime) -> str:
    """Render a naive-UTC or aware datetime as ISO-8601 UTC with a Z."""
    if dt.tzinfo is not None:
        dt = dt.astimezone(UTC).replace(tzinfo=None)
    return dt.isoformat(timespec="microseconds") + "Z"
