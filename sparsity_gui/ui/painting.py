"""How a live window puts its snapshots on its panels, frame by frame (`PanelPainting`,
mixed into ui/window.LiveWindow): the axis ranges checked by turns, a new run spread over
the first frames, the paint budget that leaves a panel for the next frame, and the frames
counted when they reach the screen."""

from __future__ import annotations

import time

# a running run's frame whose panels are expected to take longer than this (their update
# and paint, running means) leaves STAGGERED panels for the next frame (paint_panels)
PAINT_BUDGET_MS = 8.0


class PanelPainting:
    """Reads the window's ``snapshot`` and ``painted_panels()``; ``_fps_window`` is set by
    LiveWindow.start_engine."""

    _range_turn = 0
    # panels that take a new running run in one frame, the others waiting (None: all)
    NEW_RUN_PANELS: int | None = None
    # the paint budget of a running run's frame, ms (None: every panel every frame)
    paint_budget_ms: float | None = PAINT_BUDGET_MS
    staggered = 0  # panels left for the next frame, over the window's life (benchmarks)
    _held: frozenset = frozenset()  # ids of the panels left by the last frame

    def paint_panels(self, snap, budget: bool = True) -> None:
        """Axis re-layout is the expensive part of a frame, and even finding whether it is
        due (the data's bounds, every item of a plot) cost 3 ms a frame over seven panels:
        while a run goes on, one panel a frame (taking turns) checks and changes its
        ranges, besides any that must fit a new run now. A paused or finished run sends no
        more frames: then every panel fits its ranges now.

        A running run's first frame lays out every axis of every panel anew (45-60 ms for
        the six panels at m = 10^6, the longest stall of a run; still 50-60 ms with three
        panels a frame, 30-40 with one): a window's NEW_RUN_PANELS take the new run each
        frame, the others on the next frames (paint_owed, if no news comes), so the note's
        six have it within 0.1 s. A paused or finished run reaches every panel at once.

        The paint budget: when the panels' expected cost (update and paint, running means)
        is over paint_budget_ms, the costliest STAGGERED panels drawn last frame wait for
        the next one, at most half of them in one frame: the frame does not wait on all
        six, and a panel is at most one frame behind (the next frame, or paint_owed at the
        next tick if no news comes, draws it)."""
        panels = self.painted_panels()
        if not panels:
            return
        idle = snap.state != "running"
        if not idle and self.NEW_RUN_PANELS is not None:
            held = [p for p in panels if p.run_drawn != snap.run_id][self.NEW_RUN_PANELS :]
            panels = [p for p in panels if p not in held]
        waiting = self._over_budget(panels, snap) if budget and not idle else []
        turn = self._range_turn % len(panels)
        for i, panel in enumerate(panels):
            if panel not in waiting:
                panel.update_from(snap, ranges=idle or i == turn or panel.range_due)
        self._range_turn = turn + 1
        # the shared time axis is the first time panel's (the threshold crossing): when the
        # live run has left it, that panel, if waiting, draws now and refits it
        masters = [p for p in waiting if _owns_time_axis(p)]
        if masters and any(p.time_plots and p.data_left_view() for p in panels if p not in waiting):
            for panel in masters:
                waiting.remove(panel)
                panel.update_from(snap, ranges=True)
        self._held = frozenset(id(p) for p in waiting)
        self.staggered += len(waiting)

    def _over_budget(self, panels: list, snap) -> list:
        """The STAGGERED panels this frame leaves for the next: the costliest first while
        the frame's expected cost is over the budget; not one left by the last frame
        (owed now), nor one that has not drawn this run, nor more than half of them (the
        next frame draws those it leaves: two frames of about equal cost, not one light
        frame and one with every panel)."""
        budget = self.paint_budget_ms
        if budget is None:
            return []
        cost = sum(p.paint_cost_ms for p in panels)
        if cost <= budget:
            return []
        able = [p for p in panels if p.STAGGERED]
        movable = sorted(
            (p for p in able if id(p) not in self._held and p.run_drawn == snap.run_id),
            key=lambda p: -p.paint_cost_ms,
        )
        waiting = []
        for panel in movable[: len(able) // 2]:
            if cost <= budget:
                break
            waiting.append(panel)
            cost -= panel.paint_cost_ms
        return waiting

    @property
    def panels_owed(self) -> bool:
        """Whether a frame left some shown panels for the next (a new run's first frames,
        the paint budget)."""
        snap = self.snapshot
        return snap is not None and any(
            p.run_drawn != snap.run_id or id(p) in self._held for p in self.painted_panels()
        )

    def paint_owed(self, snap) -> None:
        """The panels a frame left (a new run's, the budget's), drawn now although nothing
        new came; the others have this snapshot drawn already and are not drawn again."""
        if self.panels_owed:
            self.paint_panels(snap, budget=False)
            self._frame_pending = True

    frames = 0  # frames that reached the screen
    fps = 0.0
    _frame_pending = False  # panels were drawn and no view has painted them yet

    def frame_drawn(self) -> float:
        """The panels have a new frame on their items; it is counted (count_frame) when a
        view paints it. Returns now."""
        self._frame_pending = True
        return time.perf_counter()

    def _view_painted(self) -> None:
        if self._frame_pending:
            self._frame_pending = False
            self.count_frame()

    def count_frame(self) -> float:
        """Count a frame on screen (frames, and fps over the last second); returns now."""
        now = time.perf_counter()
        window = self._fps_window
        window.append(now)
        while window and now - window[0] > 1.0:
            window.pop(0)
        self.fps = (len(window) - 1) / max(window[-1] - window[0], 1e-9) if len(window) > 1 else 0.0
        self.frames += 1
        return now


def _owns_time_axis(panel) -> bool:
    """Whether a panel holds the time axis the others' are linked to (a time plot of its
    own that is linked to none)."""
    return any(plot.vb.linkedView(plot.vb.XAxis) is None for plot in panel.time_plots)
