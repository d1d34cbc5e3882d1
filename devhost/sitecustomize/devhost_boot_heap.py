"""Freezes LangBot's boot-time heap out of the garbage collector (run-local only; devhost/README.md).

While a program boots, every full (generation 2) collection walks all objects alive so far, and
CPython runs one each time the heap has grown by a quarter: LangBot 4.11.2 reaches ~1.1 million
objects, and its full passes took 0.1-4 s each, about 9 s of a boot on two busy cores. With
DEVHOST_FREEZE_BOOT_HEAP_S=<seconds>, each full collection in that many seconds after start is
followed by `gc.freeze()`: what survived it (modules, classes, configuration) is never walked
again, so the next pass sees only what is new. Cycles among frozen objects that die later are
never collected: the price is that memory, which for boot-time objects is little.
"""

from __future__ import annotations

import gc
import os
import time

_STARTED = time.monotonic()


def install(window_s: float) -> None:
    def after_full_collection(phase: str, info: dict) -> None:
        if phase != "stop" or info.get("generation") != 2:
            return
        if time.monotonic() - _STARTED > window_s:
            gc.callbacks.remove(after_full_collection)
            return
        gc.freeze()

    gc.callbacks.append(after_full_collection)


def install_from_env() -> None:
    value = os.environ.get("DEVHOST_FREEZE_BOOT_HEAP_S")
    if value:
        install(float(value))
