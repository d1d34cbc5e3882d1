"""Shared pieces of the cost benchmarks (`turn_cost.py`, `installation.py`).

- `ThreadedBackend`: runs every call of the fake host's vector store in a worker thread, as
  LangBot 4.11.2's own Chroma adapter does (`asyncio.to_thread(col.query, ...)`, and a Qdrant
  server is another process): concurrent host calls of the plugin then overlap as they would
  on the real host, instead of running one after the other on the event loop.
- `CostHost`: the in-process fake LangBot host, metered. Every host call is counted by
  action; the host's own work for vector and embedding calls (the route that runs the
  store or the embedder, *not* the simulated JSON wire around it) is timed in wall time
  (the union of the intervals in which at least one such route runs) and, where it runs
  on the event-loop thread, in that thread's CPU time (`time.thread_time`).
- `direct_fill`: bulk-writes episodes into spaces in record layout 2 exactly as the plugin's
  import does (the import's own record builder, the plugin's own `EpisodeStore` and vector
  index through the SDK), only in larger batches and without the per-record audit entries,
  so 100,000 records take a minute instead of an hour.
- machine / version / code-state facts and the JSON writer every result file shares.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A  # noqa: E402 - after the sys.path line above

import testhost.fake_host as _fake_host  # noqa: E402 - after the sys.path line above
from ltm._storage import SNAPSHOT_PREFIX  # noqa: E402 - after the sys.path line above
from testhost import FakeLangBotHost  # noqa: E402 - after the sys.path line above

RESULTS = ROOT / "bench" / ".cache" / "results"
# Host work subtracted from the process CPU of a turn to get the plugin's own CPU.
HOST_WORK = frozenset({A.VECTOR_SEARCH.value, A.VECTOR_LIST.value, A.VECTOR_UPSERT.value,
                       A.VECTOR_DELETE.value, A.INVOKE_EMBEDDING.value})
FILL_BATCH = 2000


VECTOR_ROUTES = frozenset({A.VECTOR_SEARCH.value, A.VECTOR_LIST.value, A.VECTOR_UPSERT.value,
                           A.VECTOR_DELETE.value})


def _drive(coro: Any) -> Any:
    """Run a coroutine that never suspends (the fake Chroma and local-mode Qdrant backends) to its end."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise RuntimeError("a threaded backend call suspended")


class ThreadedBackend:
    """A fake-host vector backend whose every call runs in a worker thread (see the module docstring).
    `thread_cpu` sums the worker threads' CPU time (`time.thread_time`) spent in the calls."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.thread_cpu = 0.0
        self._lock = threading.Lock()
        # Local-mode Qdrant is one in-process data structure, not safe across threads (two overlapping
        # calls raise IndexError inside qdrant_client); the host's Qdrant is a server that keeps each
        # request atomic. Such a store's calls still run off the event loop, one at a time.
        self._one_at_a_time = threading.Lock() if not getattr(inner, "thread_safe", True) else None

    async def _run(self, method: str, *args: Any, **kw: Any) -> Any:
        def call() -> Any:
            if self._one_at_a_time is None:
                return _drive(getattr(self.inner, method)(*args, **kw))
            with self._one_at_a_time:
                return _drive(getattr(self.inner, method)(*args, **kw))

        def work() -> Any:
            start = time.thread_time()
            try:
                return call()
            finally:
                with self._lock:
                    self.thread_cpu += time.thread_time() - start
        return await asyncio.to_thread(work)

    async def upsert(self, *args: Any, **kw: Any) -> Any:
        return await self._run("upsert", *args, **kw)

    async def search(self, *args: Any, **kw: Any) -> Any:
        return await self._run("search", *args, **kw)

    async def delete(self, *args: Any, **kw: Any) -> Any:
        return await self._run("delete", *args, **kw)

    async def list(self, *args: Any, **kw: Any) -> Any:
        return await self._run("list", *args, **kw)

    async def drop(self, *args: Any, **kw: Any) -> Any:
        return await self._run("drop", *args, **kw)

    async def close(self) -> None:
        await self.inner.close()


class CostHost(FakeLangBotHost):
    """FakeLangBotHost that meters the host's own vector and embedding work."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.threaded = isinstance(self.backend, ThreadedBackend)
        self.host_wall = 0.0  # union of the intervals in which a vector/embedding route ran
        self.host_cpu = 0.0   # event-loop thread CPU inside routes that run on that thread
        self.by_label: Counter[str] = Counter()  # wall seconds per call label
        self._active = 0
        self._opened_wall = 0.0
        self.wire_cpu = 0.0  # event-loop thread CPU of the fake JSON wire (request and answer of every call)
        for name in HOST_WORK:
            self._routes[name] = self._timed(name, self._routes[name])

    def _timed(self, name: str, route: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
               ) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
        # A route on the event loop never suspends (its CPU delta is its own); a threaded store call does,
        # and the loop's CPU meanwhile belongs to whatever else runs (the plugin): not counted as host work.
        on_loop = not (self.threaded and name in VECTOR_ROUTES)

        async def timed(data: dict[str, Any]) -> dict[str, Any]:
            if self._active == 0:
                self._opened_wall = time.perf_counter()
            self._active += 1
            start, cpu0 = time.perf_counter(), time.thread_time()
            try:
                return await route(data)
            finally:
                if on_loop:
                    self.host_cpu += time.thread_time() - cpu0
                self.by_label[call_label(name, data)] += time.perf_counter() - start
                self._active -= 1
                if self._active == 0:
                    self.host_wall += time.perf_counter() - self._opened_wall
        return timed

    async def call_action(self, action: Any, data: dict[str, Any], timeout: float | None = 15.0,
                          **kw: Any) -> dict[str, Any]:
        _WIRE_OWNER[0] = self
        return await super().call_action(action, data, timeout, **kw)

    def reset_counts(self) -> None:
        super().reset_counts()
        self.host_wall = self.host_cpu = self.wire_cpu = 0.0
        self.by_label.clear()

    def store_thread_cpu(self) -> float:
        return self.backend.thread_cpu if isinstance(self.backend, ThreadedBackend) else 0.0

    def calls_by_action(self) -> dict[str, int]:
        """Calls per action; a read filtered on records' keys (a list, or a search on stores that count
        every list) is counted as `KEYED_READ`, whichever call it was. The injection snapshot's write is
        not among them: the injection does not wait for it (`after_reply`)."""
        return dict(sorted(Counter(KEYED_READ if _keyed(name, data) else name for name, data in self.calls
                                   if not _after_reply(name, data)).items()))

    def after_reply(self) -> int:
        """The injection snapshot's writes: due seconds after the injection answered, at most one per chat and
        delay (the plugin's `Bookkeeping.set_later`; tests/test_injection.py shows that the reply does not wait
        for it); the benchmarks have it written after each turn, untimed, and count it here."""
        return sum(1 for name, data in self.calls if _after_reply(name, data))


KEYED_READ = "keyed_read"


def _after_reply(name: str, data: dict[str, Any]) -> bool:
    return (name == A.SET_PLUGIN_STORAGE.value and isinstance(data, dict)
            and str(data.get("key") or "").startswith(SNAPSHOT_PREFIX))


def _keyed(name: str, data: dict[str, Any]) -> bool:
    filters = data.get("filters") if isinstance(data, dict) else None
    return name in (A.VECTOR_LIST.value, A.VECTOR_SEARCH.value) and isinstance(filters, dict) and "uuid" in filters


_WIRE_OWNER: list[CostHost | None] = [None]
_plain_wire = _fake_host._wire


def _metered_wire(value: Any) -> Any:
    """The fake host's JSON round trip of a payload, its CPU time added to the calling host's count."""
    start = time.thread_time()
    try:
        return _plain_wire(value)
    finally:
        owner = _WIRE_OWNER[0]
        if owner is not None:
            owner.wire_cpu += time.thread_time() - start


_fake_host._wire = _metered_wire  # metering only: the round trip itself is unchanged


def make_host(backend: str, threads: bool = True) -> CostHost:
    from testhost import make_backend

    store = make_backend(backend)
    host = CostHost(ThreadedBackend(store) if threads else store)
    # The size the store takes (pgvector: only LangBot's allowed sizes); the wrapper does not say it.
    host.add_embedding_model("emb-1", getattr(store, "embedding_dimension", None))
    return host


def call_label(name: str, data: dict[str, Any]) -> str:
    if _keyed(name, data):  # its size follows the records read: one label, so its median means something
        return f"{KEYED_READ} ({name})"
    if name == A.VECTOR_SEARCH.value:
        filters = ",".join(data.get("filters") or {}) or "-"
        return f"vector_search {data.get('search_type') or 'vector'} by {filters} top {data.get('top_k')}"
    return name


async def direct_fill(harness: Any, host: FakeLangBotHost, groups: Sequence[tuple[Any, Sequence[dict[str, Any]]]],
                      model: str = "emb-1", batch: int = FILL_BATCH, prime: bool = True) -> int:
    """Write each (scope, items) group's import-shaped dicts into that scope's space in record layout 2, as
    the import would.

    Records are built by the import's own code (`parse_records` + `materialize`: new ids, kept senders and
    timestamps) and written by the plugin's own `EpisodeStore.upsert_batch` (its vector index, through the SDK
    and the host), in batches of up to `batch` records of one space (a host write holds one space): the import
    writes 64 per call and audits each record, neither of which is measured here. Vectors come from the host's embedding model, computed
    here instead of through `invoke_embedding`. With `prime`, one recall per space first builds the space's
    (empty) in-process indexes, which the store's writes then keep current, as for a space that grew while
    the plugin ran. Returns the number of host vector writes."""
    from ltm import parse_records
    from ltm.episodes.transfer import materialize

    memory = harness.plugin.memory
    store = memory.parts.episodes  # the plugin's own episode store: its writes keep per-space indexes current
    # White-box on purpose: the fill writes around the gate (no audit, no marker), so it takes the vector
    # store's write side from the one holder the core has.
    writes_side = memory.parts.gate._vectors
    embedder = host.embedding_models[model]
    if len({scope.kb_id for scope, _ in groups}) != 1:
        raise ValueError("direct_fill writes into one knowledge base")
    if prime:
        for scope, _ in groups:
            await memory.recall(scope, "prime the space")
    pending: list[Any] = []
    writes = 0

    async def flush(space: Any) -> None:
        nonlocal pending, writes
        if pending:
            vectors = embedder.embed([e.content for e in pending])
            await store.upsert_batch(writes_side, space, pending, vectors)
            writes += 1
            pending = []

    for scope, items in groups:
        for part in range(0, len(items), 5000):
            pending += materialize(scope, parse_records(list(items[part:part + 5000])), None, True)
            while len(pending) >= batch:
                rest = pending[batch:]
                pending = pending[:batch]
                await flush(scope.l2)
                pending = rest
        await flush(scope.l2)
    await store.save_word_indexes()  # saves of the spaces' indexes the writes scheduled: done before any timing
    return writes


_REFERENCE_ROWS = {"results": [{"id": f"{n:08d}-ref", "distance": n / 7.0,
                                  "metadata": {"file_id": "ltm2-" + "0" * 64, "uuid": f"ref.{n}", "user_key": "u",
                                               "text": '{"ltm":2,"content":"' + "reference words " * 30 + '"}'}}
                                 for n in range(40)]}
_REFERENCE_TEXTS = [f"what did Alice say about the trip number {n} to Berlin and the new apartment?" for n in range(60)]


_REFERENCE_WORD = re.compile(r"[0-9a-z\u00c0-\u024f]+(?:['’][a-z]+)?")
_REFERENCE_STOPWORDS = frozenset("a an the and or but if of to in on at by for with from as is are was were be "
                                 "did what who about".split())


def _reference_tokens(text: str) -> list[str]:
    """The job's own word split: fixed here (the plugin's tokenizer may change; the job must not)."""
    return [w for w in _REFERENCE_WORD.findall(text.lower()) if w not in _REFERENCE_STOPWORDS]


def reference_cpu_s() -> float:
    """CPU seconds (this thread) of a fixed pure-Python job like a turn's own work (a JSON round trip of a
    40-row search answer, splitting 60 questions into words, scoring 400 numbers): the machine is shared,
    so plugin CPU is also given as a multiple of this job measured next to it, turn by turn, which the load
    inflates alike. It uses no plugin code, so its size does not change with the plugin. About 3 ms on a
    quiet core of this machine."""
    start = time.thread_time()
    for _ in range(4):
        json.loads(json.dumps(_REFERENCE_ROWS))
    for text in _REFERENCE_TEXTS * 2:
        _reference_tokens(text)
    scores = sorted((n * 7919) % 1000 / 1000 for n in range(400))
    sum(s * s for s in scores)
    return time.thread_time() - start


def normalized_cpu(plugin_s: Sequence[float], reference_s: Sequence[float]) -> dict[str, float]:
    """Plugin CPU against the reference job measured beside it: the median ratio, and that ratio times
    the reference's quietest run in this process (plugin CPU at the pace of the least loaded moment)."""
    ratios = [p / r for p, r in zip(plugin_s, reference_s) if r > 0]
    ratio = statistics.median(ratios) if ratios else 0.0
    quiet = min(reference_s) if reference_s else 0.0
    return {"ratio_to_reference": round(ratio, 3), "reference_quiet_ms": round(quiet * 1000, 3),
            "reference_median_ms": round(statistics.median(reference_s) * 1000, 3) if reference_s else 0.0,
            "plugin_cpu_at_quiet_pace_ms": round(ratio * quiet * 1000, 3)}


def use_window(size: int | None) -> int:
    """Measure with a vector window of `size` rows instead of the shipped `vector_window` (a
    benchmark-only seam: every recall applies the KB's settings to its recipe with
    `RecallRecipe.resolved_for`, patched here for this process). Returns the window every recall now uses."""
    from dataclasses import replace

    from ltm.episodes.ranking import RecallRecipe

    shipped = _SHIPPED_RESOLVED_FOR[0]
    if size is None:
        RecallRecipe.resolved_for = shipped  # type: ignore[method-assign]  # the shipped method back
        return int(RecallRecipe().vector_window)

    def resolved_for(recipe: RecallRecipe, settings: Any) -> RecallRecipe:
        resolved = shipped(recipe, settings)
        return resolved if resolved.vector_window == size else replace(resolved, vector_window=size)

    RecallRecipe.resolved_for = resolved_for  # type: ignore[method-assign]  # benchmark-only seam
    return size


def _shipped_resolved_for() -> Any:
    from ltm.episodes.ranking import RecallRecipe

    return RecallRecipe.resolved_for


_SHIPPED_RESOLVED_FOR = [_shipped_resolved_for()]


# ----------------------------------------------------------------------------- figures
def pct(values: Sequence[float], q: float) -> float:
    """The q-quantile (0..1), nearest rank; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, int(-(-q * len(ordered) // 1)))  # ceil(q * n), at least 1
    return ordered[min(rank, len(ordered)) - 1]


def summary_ms(seconds: Sequence[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    return {"median": round(statistics.median(ms), 3) if ms else 0.0, "p95": round(pct(ms, 0.95), 3),
            "min": round(min(ms), 3) if ms else 0.0, "max": round(max(ms), 3) if ms else 0.0, "n": len(ms)}


def peak_rss_mb() -> float:
    """High-water mark of this process's resident set (ru_maxrss is KiB on Linux)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def current_rss_mb() -> float:
    try:
        with open("/proc/self/statm") as fh:
            return round(int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)
    except OSError:
        return 0.0


def load_average() -> list[float]:
    """1, 5 and 15 minute load averages: the machine is shared, timings move with its load."""
    return [round(x, 2) for x in os.getloadavg()]


def with_end_load(env: dict[str, Any]) -> dict[str, Any]:
    return {**env, "machine": {**env["machine"], "load_average_at_end": load_average()}}


def environment() -> dict[str, Any]:
    from importlib import metadata

    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "-"

    cpu = ""
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), "")
    except OSError:
        pass

    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    return {
        "machine": {"cpu": cpu, "cores": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version(),
                    "load_average_at_start": load_average()},
        "versions": {n: version(n) for n in ("chromadb", "qdrant-client", "langbot-plugin", "numpy")},
        "code": {"commit": git("rev-parse", "HEAD"), "branch": git("rev-parse", "--abbrev-ref", "HEAD"),
                 "uncommitted_changes": bool(git("status", "--porcelain", "--untracked-files=no"))},
        "embedder": "testhost.HashingEmbedder(256): deterministic feature hashing in pure Python, run inside the "
                    "fake host (its time is host work, part of the floor)",
    }


def write_json(result: dict[str, Any], path: Path | str) -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    return target


def command_line(script: str, argv: Sequence[str]) -> str:
    import shlex

    return f".venv/bin/python bench/{script} {shlex.join(list(argv))}".rstrip()
