"""Deterministic stand-in for a host embedding model.

No model weights are available offline, so the fake host embeds text with
feature hashing: every word and every character trigram of a word lands in a
fixed bucket with a fixed sign. Equal texts give equal vectors and texts that
share words or word fragments get a higher cosine similarity, which is all
that retrieval tests need.
"""

from __future__ import annotations

import hashlib
import math
import re

# Word characters, except that each CJK ideograph / kana / hangul syllable is
# its own token: CJK text has no spaces, so whole runs would never match.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN_RE = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+", re.UNICODE)

_WORD_WEIGHT = 1.0
_TRIGRAM_WEIGHT = 0.35


def tokenize(text: str) -> list[str]:
    """Lower-case ``text`` and split it into word / CJK-character tokens."""
    return _TOKEN_RE.findall(text.lower())


def _bucket(feature: str, dim: int) -> tuple[int, float]:
    # blake2b instead of hash(): hash() is salted per process (PYTHONHASHSEED),
    # which would make vectors differ between a test run and a restart.
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "big")
    sign = 1.0 if value & 1 else -1.0
    return (value >> 1) % dim, sign


class HashingEmbedder:
    """Feature-hashing embedder producing L2-normalized vectors of size ``dim``."""

    def __init__(self, dim: int = 256) -> None:
        if dim < 2:
            raise ValueError("dim must be at least 2")
        self.dim = dim

    def embed_one(self, text: str) -> list[float]:
        vec = [0.0] * self.dim
        for token in tokenize(text):
            idx, sign = _bucket("w:" + token, self.dim)
            vec[idx] += sign * _WORD_WEIGHT
            # Single CJK characters have no useful trigrams.
            if len(token) >= 2:
                padded = f"<{token}>"
                for i in range(len(padded) - 2):
                    idx, sign = _bucket("t:" + padded[i : i + 3], self.dim)
                    vec[idx] += sign * _TRIGRAM_WEIGHT
        norm = math.sqrt(sum(x * x for x in vec))
        if norm == 0.0:
            # Empty / punctuation-only text: return a valid unit vector so
            # cosine-based stores (Qdrant) never see a zero vector.
            vec[0] = 1.0
            return vec
        return [x / norm for x in vec]

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_one(t) for t in texts]


def cosine(a: list[float], b: list[float]) -> float:
    """Cosine similarity of two vectors (0.0 if either is all zeros)."""
    dot = sum(x * y for x, y in zip(a, b))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return dot / (na * nb)
