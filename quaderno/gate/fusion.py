"""The attention fusion of CCSK §3.4 (Eq. 5–6), in torch.

    I(q, r) = MultiHead(q, r, r)                                            (5)
    P = ReLU(W_c [q ⊕ r ⊕ I(q, r) ⊕ F(q, r)] + b_c)
    g_a = σ(W_aP P),  g_w = softmax(W_wP P),  g = (g_a ⊙ g_w) / Σ(g_a ⊙ g_w)   (6)
    p = gᵀ F(q, r),   F = [F_SN, F_RQM]

8 heads, dropout 0.1, one layer; P has the embedder's width d (768 in the paper, so the
input of W_c is 3d + 2 = 2306). Two defects of the paper are selectable (spec A1, A2):

- ``attention="pooled"`` (paper-literal): q and r are single vectors, so the softmax runs over
  one key, equals 1, and I(q, r) = W_V r does not depend on q. ``attention="token"``
  (recommended): queries are q's token states, keys and values r's token states (masked),
  then a masked mean over q's positions.
- ``trust="normalized"`` (paper-literal): Eq. 7 compares max(g) with τ_conf; g sums to 1 over
  two entries, so max(g) ≥ 0.5 and a τ_conf below 0.5 makes the fallback dead.
  ``trust="unnormalized"`` (recommended): compare max(g_a ⊙ g_w) ∈ [0, 1] instead.

Trained (spec F5) with BCE on p (clamped to [1e-6, 1 − 1e-6]) against y, AdamW (lr 1e-3,
weight decay 0.01), batch 64, ≤ 30 epochs with early stopping (patience 5) on a 15%
validation split, seed fixed; the F inputs are out-of-fold SN and RQM scores.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
from torch import nn

from quaderno.errors import ConfigError
from quaderno.index.embedders import Embedder

log = logging.getLogger(__name__)

Attention = Literal["pooled", "token"]
Trust = Literal["normalized", "unnormalized"]


@dataclass
class FusionInputs:
    """A batch: pooled q and r vectors (n, d), F (n, 2), and for token attention the token
    states (n, L, d) with masks (n, L; True = a real token)."""

    q: torch.Tensor
    r: torch.Tensor
    f: torch.Tensor
    q_tok: torch.Tensor | None = None
    q_mask: torch.Tensor | None = None
    r_tok: torch.Tensor | None = None
    r_mask: torch.Tensor | None = None

    def __len__(self) -> int:
        return int(self.q.shape[0])

    def take(self, idx: torch.Tensor) -> FusionInputs:
        def pick(t: torch.Tensor | None) -> torch.Tensor | None:
            return None if t is None else t[idx]
        return FusionInputs(self.q[idx], self.r[idx], self.f[idx], pick(self.q_tok),
                            pick(self.q_mask), pick(self.r_tok), pick(self.r_mask))


@dataclass
class FusionOutput:
    p: torch.Tensor  # gᵀF, (n,)
    g: torch.Tensor  # (n, 2)
    g_a: torch.Tensor
    g_w: torch.Tensor
    trust: torch.Tensor  # what Eq. 7 compares with τ_conf, (n,)
    attended: torch.Tensor  # I(q, r), (n, d)


class AttentionFusion(nn.Module):
    """Eq. 5–6."""

    def __init__(self, dim: int, *, heads: int = 8, dropout: float = 0.1,
                 attention: Attention = "pooled", trust: Trust = "normalized") -> None:
        super().__init__()
        if dim < 1 or heads < 1 or dim % heads:
            raise ConfigError(f"fusion width {dim} must be a positive multiple of heads {heads}")
        if attention not in ("pooled", "token"):
            raise ConfigError(f"attention must be 'pooled' or 'token', got {attention!r}")
        if trust not in ("normalized", "unnormalized"):
            raise ConfigError(f"trust must be 'normalized' or 'unnormalized', got {trust!r}")
        if not 0 <= dropout < 1:
            raise ConfigError(f"dropout must be in [0, 1), got {dropout}")
        self.dim, self.heads, self.attention, self.trust_mode = dim, heads, attention, trust
        self.mha = nn.MultiheadAttention(dim, heads, dropout=dropout, batch_first=True)
        self.w_c = nn.Linear(3 * dim + 2, dim)
        self.dropout = nn.Dropout(dropout)
        self.w_a = nn.Linear(dim, 2)
        self.w_w = nn.Linear(dim, 2)

    @property
    def in_features(self) -> int:
        return self.w_c.in_features

    def attend(self, x: FusionInputs) -> torch.Tensor:
        """I(q, r) of Eq. 5."""
        if self.attention == "pooled":
            out, _ = self.mha(x.q[:, None, :], x.r[:, None, :], x.r[:, None, :])
            return out[:, 0, :]
        if x.q_tok is None or x.r_tok is None or x.q_mask is None or x.r_mask is None:
            raise ConfigError("token attention needs token states of q and r")
        out, _ = self.mha(x.q_tok, x.r_tok, x.r_tok, key_padding_mask=~x.r_mask)
        weights = x.q_mask.to(out.dtype)[..., None]
        return (out * weights).sum(1) / weights.sum(1).clamp(min=1.0)

    def forward(self, x: FusionInputs) -> FusionOutput:
        attended = self.attend(x)
        p_state = self.dropout(torch.relu(self.w_c(torch.cat([x.q, x.r, attended, x.f], -1))))
        g_a = torch.sigmoid(self.w_a(p_state))
        g_w = torch.softmax(self.w_w(p_state), dim=-1)
        prod = g_a * g_w
        g = prod / prod.sum(-1, keepdim=True).clamp(min=1e-12)
        p = (g * x.f).sum(-1)
        trust = g.max(-1).values if self.trust_mode == "normalized" else prod.max(-1).values
        return FusionOutput(p=p, g=g, g_a=g_a, g_w=g_w, trust=trust, attended=attended)


def train_fusion(model: AttentionFusion, x: FusionInputs, y: Sequence[int], *, seed: int = 0,
                 epochs: int = 30, patience: int = 5, lr: float = 1e-3,
                 weight_decay: float = 0.01, batch_size: int = 64, valid_fraction: float = 0.15,
                 pos_weight: float | None = None) -> list[dict[str, float]]:
    """Fit with BCE(p, y); returns the per-epoch losses. The best epoch's weights are kept."""
    torch.manual_seed(seed)
    target = torch.as_tensor(np.asarray(y, dtype=np.float32))
    n = len(target)
    if n != len(x):
        raise ConfigError(f"{len(x)} fusion rows but {n} labels")
    if n < 4:
        raise ConfigError(f"the fusion needs at least 4 labelled rows, got {n}")
    gen = torch.Generator().manual_seed(seed)
    order = torch.randperm(n, generator=gen)
    n_valid = max(1, int(round(valid_fraction * n)))
    valid, train = order[:n_valid], order[n_valid:]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)

    def loss_of(out: FusionOutput, t: torch.Tensor) -> torch.Tensor:
        p = out.p.clamp(1e-6, 1 - 1e-6)
        w = None if pos_weight is None else torch.where(t > 0.5, pos_weight, 1.0)
        return nn.functional.binary_cross_entropy(p, t, weight=w)

    best, best_state, waited, history = float("inf"), None, 0, []
    for epoch in range(epochs):
        model.train()
        perm = train[torch.randperm(len(train), generator=gen)]
        total = 0.0
        for start in range(0, len(perm), batch_size):
            idx = perm[start:start + batch_size]
            opt.zero_grad()
            loss = loss_of(model(x.take(idx)), target[idx])
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        model.eval()
        with torch.no_grad():
            v = float(loss_of(model(x.take(valid)), target[valid]))
        history.append({"epoch": epoch + 1, "train_loss": total / max(len(train), 1),
                        "valid_loss": v})
        if v < best - 1e-6:
            best, waited = v, 0
            best_state = {k: t.detach().clone() for k, t in model.state_dict().items()}
        else:
            waited += 1
            if waited >= patience:
                break
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    log.info("fusion: %d epochs, best valid loss %.4f", len(history), best)
    return history


def token_states(embedder: Embedder, texts: Sequence[str], *, max_len: int = 32
                 ) -> tuple[torch.Tensor, torch.Tensor]:
    """Token states (n, max_len, d) and masks for token attention: a sentence-transformers
    model's last-layer token embeddings, a static embedder's token rows, else each word
    embedded alone (HashEmbedder)."""
    model = getattr(embedder, "_model", None)
    token_vectors = getattr(embedder, "token_vectors", None)
    rows: list[np.ndarray] = []
    if token_vectors is not None:
        rows = [np.asarray(v, dtype=np.float32)[:max_len] for v in token_vectors(list(texts))]
    elif model is not None and hasattr(model, "encode"):
        out = model.encode(list(texts), output_value="token_embeddings", convert_to_numpy=False,
                           show_progress_bar=False)
        rows = [np.asarray(t.detach().cpu().numpy() if hasattr(t, "detach") else t,
                           dtype=np.float32)[:max_len] for t in out]
    else:
        for text in texts:
            words = text.split()[:max_len] or [""]
            rows.append(embedder.embed_documents(words))
    states = np.zeros((len(texts), max_len, embedder.dim), dtype=np.float32)
    mask = np.zeros((len(texts), max_len), dtype=bool)
    for i, row in enumerate(rows):
        n = max(1, min(len(row), max_len))
        states[i, :len(row[:n])] = row[:n]
        mask[i, :n] = True
    return torch.from_numpy(states), torch.from_numpy(mask)


def fusion_inputs(embedder: Embedder, q: np.ndarray, r: np.ndarray, f: np.ndarray,
                  questions: Sequence[str], responses: Sequence[str], *, attention: str,
                  token_len: int = 32) -> FusionInputs:
    """The fusion's batch from pooled vectors, F and the texts (token states for token
    attention) — the one function training and inference share."""
    x = FusionInputs(q=torch.from_numpy(np.asarray(q, dtype=np.float32)),
                     r=torch.from_numpy(np.asarray(r, dtype=np.float32)),
                     f=torch.from_numpy(np.asarray(f, dtype=np.float32)))
    if attention == "token":
        x.q_tok, x.q_mask = token_states(embedder, questions, max_len=token_len)
        x.r_tok, x.r_mask = token_states(embedder, responses, max_len=token_len)
    return x
