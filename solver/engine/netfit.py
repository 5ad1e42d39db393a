"""Fitting the evaluation's network (:func:`solver.kernels.evaluate.network`) to game outcomes.

The model is the one the engine evaluates: the linear features, antisymmetric
(:func:`solver.engine.tuning.antisymmetric_basis`), plus ``v · (relu(h(m, p)) -
relu(h(p, m)))`` with ``h(m, p) = b + W[mover's points] + W[n + opponent's points]`` summed.
It is fitted by minibatch Adam on the mean cross-entropy against the games' results, on
the training positions and their images under the board's symmetries (the evaluation
should give a position and its mirror image the same score, and six images give the
network six times the positions to learn from). Numpy only: about a minute an epoch for
a million positions and their images on one core.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solver.engine.tuning import antisymmetric_basis
from solver.kernels.evaluate import HMAX, NET, NF, network_length


@dataclass(frozen=True)
class NetFit:
    """How to fit: hidden units, epochs, batch, learning rate, its cut for the last epochs, L2 on ``W``."""

    hidden: int = 16
    epochs: int = 10
    batch: int = 2048
    lr: float = 2e-3
    late_lr: float = 0.3  # the learning rate's factor for the last two epochs
    l2: float = 1e-5
    seed: int = 0


def board_bits(bits: np.ndarray, n: int) -> np.ndarray:
    """One row of ``n`` 0/1 bytes per bitboard."""
    return ((bits.astype(np.uint64)[:, None] >> np.arange(n, dtype=np.uint64)) & np.uint64(1)).astype(np.uint8)


def symmetric_images(m: np.ndarray, p: np.ndarray, symmetries) -> tuple[np.ndarray, np.ndarray]:
    """The 0/1 rows of ``m`` and ``p`` under every symmetry (identity included), stacked
    symmetry by symmetry."""
    n = len(symmetries[0])
    M, P = board_bits(m, n), board_bits(p, n)
    ms, ps = [], []
    for sym in symmetries:
        perm = np.asarray(sym)
        M2, P2 = np.empty_like(M), np.empty_like(P)
        M2[:, perm] = M
        P2[:, perm] = P
        ms.append(M2)
        ps.append(P2)
    return np.concatenate(ms), np.concatenate(ps)


class Model:
    """The parameters: ``u`` (the linear weights in the antisymmetric basis), ``W``, ``b``, ``v``."""

    def __init__(self, n: int, hidden: int, w_linear: np.ndarray, seed: int) -> None:
        if not 1 <= hidden <= HMAX:
            raise ValueError(f"hidden units must be 1..{HMAX}, not {hidden}")
        rng = np.random.default_rng(seed)
        self.n, self.hidden = n, hidden
        self.T = antisymmetric_basis(NF).astype(np.float32)
        self.u = np.linalg.lstsq(self.T, w_linear.astype(np.float32), rcond=None)[0].astype(np.float32)
        self.W = (rng.standard_normal((2 * n, hidden)) * 0.1).astype(np.float32)
        self.b = np.zeros(hidden, np.float32)
        self.v = np.zeros(hidden, np.float32)

    @classmethod
    def from_vector(cls, w: np.ndarray) -> "Model":
        """The model of a weight vector in the kernels' layout (float64; the linear weights
        taken as they are, without the antisymmetric basis)."""
        w = np.asarray(w, dtype=np.float64)
        h, n = int(w[NF]), int(w[NF + 1])
        if not (1 <= h <= HMAX and len(w) == network_length(n, h)):
            raise ValueError("not a weight vector with a network in the evaluation's layout")
        model = cls(n, h, w[:NF], seed=0)
        rows = NET + 2 * n * h
        model.T, model.u = np.eye(NF), w[:NF].copy()
        model.W, model.b, model.v = w[NET:rows].reshape(2 * n, h), w[rows:rows + h], w[rows + h:]
        return model

    def params(self) -> list[np.ndarray]:
        return [self.u, self.W, self.b, self.v]

    def logits(self, X: np.ndarray, M: np.ndarray, P: np.ndarray) -> np.ndarray:
        return self._forward(X, M, P)[0]

    def _forward(self, X, M, P):
        A = np.concatenate([M, P], 1).astype(np.float32)
        B = np.concatenate([P, M], 1).astype(np.float32)
        ha, hb = A @ self.W + self.b, B @ self.W + self.b
        ra, rb = np.maximum(ha, 0), np.maximum(hb, 0)
        return (X @ self.T) @ self.u + (ra - rb) @ self.v, A, B, ha, hb, ra, rb

    def gradients(self, X, M, P, y, l2: float) -> list[np.ndarray]:
        z, A, B, ha, hb, ra, rb = self._forward(X, M, P)
        d = (1 / (1 + np.exp(-z)) - y) / len(y)
        da = np.outer(d, self.v) * (ha > 0)
        db = -np.outer(d, self.v) * (hb > 0)
        return [(X @ self.T).T @ d, A.T @ da + B.T @ db + l2 * self.W, da.sum(0) + db.sum(0), (ra - rb).T @ d]

    def vector(self) -> np.ndarray:
        """The weight vector the kernels take (the layout of :mod:`solver.kernels.evaluate`)."""
        lin = self.T.astype(np.float64) @ self.u.astype(np.float64)
        return np.concatenate([lin, [self.hidden, self.n], self.W.ravel(), self.b, self.v]).astype(np.float64)


def cross_entropy(z: np.ndarray, y: np.ndarray) -> float:
    """Mean cross-entropy of logits ``z`` against results ``y`` (1 win, 0.5 draw, 0 loss)."""
    z = z.astype(np.float64)
    return float(np.mean(np.logaddexp(0, z) - y * z))


def fit_network(X: np.ndarray, m: np.ndarray, p: np.ndarray, y: np.ndarray, symmetries, w_linear: np.ndarray,
                how: NetFit = NetFit(), report=None) -> Model:
    """Fit the model to the positions ``(m, p)`` (features ``X``, results ``y``) and their
    symmetric images; ``report(epoch, model)`` is called after each epoch."""
    Ms, Ps = symmetric_images(m, p, symmetries)
    k = len(symmetries)
    Xs = np.tile(X.astype(np.float32), (k, 1))
    ys = np.tile(y.astype(np.float32), k)
    model = Model(len(symmetries[0]), how.hidden, np.asarray(w_linear), how.seed)
    params = model.params()
    mom = [np.zeros_like(x) for x in params]
    sq = [np.zeros_like(x) for x in params]
    rng = np.random.default_rng(how.seed)
    lr, step = how.lr, 0
    order = np.arange(len(ys))
    for epoch in range(how.epochs):
        if epoch == how.epochs - 2:
            lr *= how.late_lr
        rng.shuffle(order)
        for k0 in range(0, len(order), how.batch):
            idx = order[k0:k0 + how.batch]
            grads = model.gradients(Xs[idx], Ms[idx], Ps[idx], ys[idx], how.l2)
            step += 1
            for i, (x, g) in enumerate(zip(params, grads)):
                mom[i] = 0.9 * mom[i] + 0.1 * g
                sq[i] = 0.999 * sq[i] + 0.001 * g * g
                x -= lr * (mom[i] / (1 - 0.9 ** step)) / (np.sqrt(sq[i] / (1 - 0.999 ** step)) + 1e-8)
        if report is not None:
            report(epoch, model)
    return model
