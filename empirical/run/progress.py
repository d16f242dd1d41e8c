"""Progress of a long run, across all experiments: points done / total,
elapsed time and estimated time left, on one line updated in place on a terminal (``\\r``) and
as plain lines every ``interval`` seconds in a log (a stream that is not a TTY).

The estimate weighs points by their expected cost (the scheduler's estimate, from stored
timings), not by their number: a longest-first queue finishes its expensive points first, so
counting points would overstate the time left early on.
"""
from __future__ import annotations

import sys
import time
from typing import Callable, TextIO

__all__ = ["Progress", "format_seconds"]


def format_seconds(s: float) -> str:
    """``5s``, ``3m07s``, ``1h02m``."""
    s = max(0.0, s)
    if s < 60:
        return f"{s:.0f}s"
    if s < 3600:
        return f"{int(s // 60)}m{int(s % 60):02d}s"
    return f"{int(s // 3600)}h{int(s % 3600 // 60):02d}m"


class Progress:
    """Counts points as they finish and shows where the run stands.

    ``total`` points will be computed (``cached`` more were read back and are only mentioned);
    ``total_cost`` is their summed expected cost (default: one unit a point).  ``tty`` defaults
    to ``stream.isatty()``.  On a TTY the line is redrawn at most every ``min_redraw`` s; in a
    log a line is written at most every ``interval`` s, and always at the end (:meth:`close`).
    """

    def __init__(self, total: int, *, total_cost: float | None = None, cached: int = 0,
                 stream: TextIO | None = None, tty: bool | None = None, interval: float = 15.0,
                 min_redraw: float = 0.2, clock: Callable[[], float] = time.monotonic):
        if total < 0:
            raise ValueError(f"total must be >= 0, got {total}")
        if interval <= 0:
            raise ValueError(f"interval must be > 0 seconds, got {interval}")
        self.total, self.cached, self.done = int(total), int(cached), 0
        self.total_cost = float(total if total_cost is None else total_cost)
        self.done_cost = 0.0
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)()) if tty is None else tty
        self.interval, self.min_redraw, self.clock = interval, min_redraw, clock
        self.start = clock()
        self._last = -float("inf")
        self._shown = 0          # width of the line on screen (TTY), to blank it
        self._written = -1       # points done when the last line was written
        self._closed = False

    # -- what is shown -------------------------------------------------------------------------

    def eta(self) -> float | None:
        """Seconds left, from the elapsed time per unit of expected cost done (None: no data)."""
        if self.done == 0 or self.done_cost <= 0:
            return None
        elapsed = self.clock() - self.start
        return elapsed * max(self.total_cost - self.done_cost, 0.0) / self.done_cost

    def line(self) -> str:
        elapsed = self.clock() - self.start
        pct = 100.0 * self.done / self.total if self.total else 100.0
        parts = [f"points {self.done}/{self.total} ({pct:.0f}%)"]
        if self.cached:
            parts.append(f"{self.cached} cached")
        parts.append(f"{format_seconds(elapsed)} elapsed")
        eta = self.eta()
        if self.done < self.total:
            parts.append("time left unknown" if eta is None else f"~{format_seconds(eta)} left")
        return ", ".join(parts)

    # -- updates -------------------------------------------------------------------------------

    def advance(self, n: int = 1, cost: float | None = None) -> None:
        """``n`` more points finished, of expected cost ``cost`` (default one unit each)."""
        self.done += n
        self.done_cost += float(n if cost is None else cost)
        self._show(force=self.done >= self.total)

    def say(self, msg: str) -> None:
        """Print a message line without garbling the progress line (it is redrawn after)."""
        self._blank()
        print(msg, file=self.stream, flush=True)
        if self.tty and not self._closed:
            self._show(force=True)

    def close(self) -> None:
        """Final state: the line is left on screen (TTY) or written once more (log)."""
        if self._closed:
            return
        self._show(force=True, final=True)
        if self.tty and self._shown:
            print(file=self.stream, flush=True)
        self._closed = True

    def _blank(self) -> None:
        if self.tty and self._shown:
            self.stream.write("\r" + " " * self._shown + "\r")
            self._shown = 0

    def _show(self, force: bool = False, final: bool = False) -> None:
        if self._closed:
            return
        now = self.clock()
        wait = self.min_redraw if self.tty else self.interval
        if not force and now - self._last < wait:
            return
        if not self.tty and final and self._written == self.done:
            return          # a log already has this state's line
        self._last, self._written = now, self.done
        text = self.line()
        if self.tty:
            pad = max(self._shown - len(text), 0)
            self.stream.write("\r" + text + " " * pad)
            self._shown = len(text)
            self.stream.flush()
        else:
            print(text, file=self.stream, flush=True)
