"""The built-ins' numpy references as they were before they were made fast (commit af4b39d),
kept here only as the test oracle and the "before" of benchmarks/reference_speed.py.

Each function is a pure function of (seed, capacity, n, options) that redoes what the old
`setup(ctx, capacity)` drew from `ctx.rng(salt)` and what the old `reference(n)` computed,
with nothing cached. Slow on purpose: use small n in tests.
"""

from __future__ import annotations

import numpy as np

_GELU_K = float(np.sqrt(2.0 / np.pi))
_NO_LABEL = np.uint32(0xFFFFFFFF)


def _rng(seed: int, salt: int) -> np.random.Generator:
    return np.random.default_rng([seed, salt])


# --- scan, resident, chain -------------------------------------------------------------

def scan(seed: int, capacity: int, n: int) -> dict[str, np.ndarray]:
    host = _rng(seed, 0x5CA4).integers(0, 2**32, size=capacity, dtype=np.uint32)
    v = host[:n]
    out = np.zeros(v.size, dtype=np.uint32)
    if v.size > 1:
        inclusive = np.cumsum(v[:-1], dtype=np.uint64) & np.uint64(0xFFFFFFFF)
        out[1:] = inclusive.astype(np.uint32)
    return {"prefix": out}


def resident(seed: int, capacity: int, n: int) -> dict[str, np.ndarray]:
    rng = _rng(seed, 0x2E5)
    a, b = (int(v) for v in rng.integers(0, 2**32, size=2, dtype=np.uint32))
    x = rng.integers(0, 2**32, size=capacity, dtype=np.uint32)[:n].astype(np.uint64)
    y = (np.uint64(a) * x + np.uint64(b)) & np.uint64(0xFFFFFFFF)
    return {"y": y.astype(np.uint32)}


def chain(kernels: int) -> dict[str, np.ndarray]:
    return {"marks": np.arange(1, kernels + 1, dtype=np.uint32)}


# --- join ------------------------------------------------------------------------------

def _distinct_keys(rng: np.random.Generator, count: int, arity: int) -> np.ndarray:
    bits = 32 * arity
    found = np.zeros(0, dtype=np.uint64)
    while found.size < count:
        draw = rng.integers(0, 2**bits, size=2 * count, dtype=np.uint64)
        found = np.unique(np.concatenate([found, draw]))
    chosen = rng.permutation(found)[:count]
    if arity == 1:
        return chosen.astype(np.uint32)[None, :]
    return np.stack([(chosen >> np.uint64(32)).astype(np.uint32),
                     (chosen & np.uint64(0xFFFFFFFF)).astype(np.uint32)])


def join_inputs(seed: int, capacity: int, *, arity: int = 1, build_rows: int = 4096,
                duplicates: int = 2, hit_rate: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    rng = _rng(seed, 0x701)
    distinct = -(-build_rows // duplicates)
    keys = _distinct_keys(rng, distinct, arity)
    which = np.repeat(np.arange(distinct), duplicates)[:build_rows]
    build = keys[:, rng.permutation(which)]
    probe = rng.integers(0, 2**32, size=(arity, capacity), dtype=np.uint32)
    hit = rng.random(capacity) < hit_rate
    probe[:, hit] = keys[:, rng.integers(0, distinct, size=int(hit.sum()))]
    if arity == 2:
        near = ~hit & (rng.random(capacity) < 0.5)
        probe[0, near] = keys[0, rng.integers(0, distinct, size=int(near.sum()))]
    return build, probe


def _combined(keys: np.ndarray) -> np.ndarray:
    if keys.shape[0] == 1:
        return keys[0].astype(np.uint64)
    return (keys[0].astype(np.uint64) << np.uint64(32)) | keys[1].astype(np.uint64)


def join_pairs(build: np.ndarray, probe: np.ndarray) -> np.ndarray:
    bkeys, pkeys = _combined(build), _combined(probe)
    order = np.argsort(bkeys, kind="stable")
    sorted_keys = bkeys[order]
    lo = np.searchsorted(sorted_keys, pkeys, side="left")
    counts = np.searchsorted(sorted_keys, pkeys, side="right") - lo
    total = int(counts.sum())
    probe_rows = np.repeat(np.arange(pkeys.size, dtype=np.int64), counts)
    within = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    build_rows = order[np.repeat(lo, counts) + within]
    return np.stack([probe_rows, build_rows], axis=1).astype(np.uint32).reshape(total, 2)


def join(seed: int, capacity: int, n: int, **options: float) -> dict[str, np.ndarray]:
    build, probe = join_inputs(seed, capacity, **options)  # type: ignore[arg-type]
    pairs = join_pairs(build, probe[:, :n])
    return {"pairs": pairs, "matches": np.array([pairs.shape[0]], dtype=np.uint32)}


# --- fixpoint and converge -------------------------------------------------------------

def label_match(seed: int, capacity: int, components: int, degree: int) -> np.ndarray:
    rng = _rng(seed, 0xF1C5)
    match = np.empty((degree, capacity), dtype=np.uint32)
    for k in range(degree):
        for c in range(min(components, capacity)):
            members = rng.permutation(np.arange(c, capacity, components, dtype=np.uint32))
            pairs = members.size // 2
            a, b = members[:pairs], members[pairs:2 * pairs]
            match[k, a], match[k, b] = b, a
            if members.size % 2:
                match[k, members[-1]] = members[-1]
    return match


def _neighbours(match: np.ndarray, components: int, n: int) -> list[np.ndarray]:
    v = np.arange(n, dtype=np.int64)
    j, c = np.divmod(v, components)
    parent = np.where(j > 0, (j - 1) // 2 * components + c, v)
    left = (2 * j + 1) * components + c
    slots = [parent, left, left + components]
    slots += [match[k, :n].astype(np.int64) for k in range(match.shape[0])]
    return [np.where(s < n, s, n) for s in slots]


def _step(labels: np.ndarray, slots: list[np.ndarray]) -> np.ndarray:
    padded = np.append(labels, _NO_LABEL)
    out = labels.copy()
    for s in slots:
        np.minimum(out, padded[s], out=out)
    return out


def fixpoint(seed: int, capacity: int, n: int, iterations: int = 16, degree: int = 2,
             components: int = 5) -> dict[str, np.ndarray]:
    slots = _neighbours(label_match(seed, capacity, components, degree), components, n)
    labels = np.arange(n, dtype=np.uint32)
    for _ in range(iterations):
        labels = _step(labels, slots)
    return {"labels": labels}


def converge(seed: int, capacity: int, n: int, degree: int = 2,
             components: int = 5) -> dict[str, np.ndarray]:
    per_tree = max(1, -(-capacity // components))
    limit = (per_tree.bit_length() - 1 + 1) // 2 + 2  # max_rounds
    slots = _neighbours(label_match(seed, capacity, components, degree), components, n)
    labels = np.arange(n, dtype=np.uint32)
    rounds = 0
    while True:
        first = _step(labels, slots)
        second = _step(first, slots)
        changed = not (np.array_equal(first, labels) and np.array_equal(second, first))
        labels, rounds = second, rounds + 1
        if not changed or rounds >= limit:
            return {"labels": labels, "rounds": np.array([rounds], dtype=np.uint32)}


# --- decode ----------------------------------------------------------------------------

def _decode_rows(x0: np.ndarray, gains: np.ndarray, weights: np.ndarray,
                 biases: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    out = np.empty(x0.shape, dtype=np.float32)
    g, w, b = (a.astype(np.float64) for a in (gains, weights, biases))
    hidden = x0.shape[1]
    for start in range(0, x0.shape[0], 1 << 14):
        x = x0[start:start + (1 << 14)].astype(np.float64)
        for layer in range(w.shape[0]):
            rms = np.einsum("ij,ij->i", x, x)[:, None]
            rms /= hidden
            rms += eps
            np.sqrt(rms, out=rms)
            z = (x / rms * g[layer]) @ w[layer]
            z += b[layer]
            t = z * z
            t *= 0.044715 * z
            t += z
            t *= _GELU_K
            np.tanh(t, out=t)
            t += 1.0
            t *= 0.5 * z
            x += t
        out[start:start + x.shape[0]] = x
    return out


def decode(seed: int, capacity: int, n: int, layers: int = 4,
           hidden: int = 64) -> dict[str, np.ndarray]:
    mrng = _rng(seed, 0xDEC1)
    L, H = layers, hidden
    gains = (1.0 + 0.1 * mrng.standard_normal((L, H))).astype(np.float32)
    weights = (mrng.standard_normal((L, H, H)) / np.sqrt(H)).astype(np.float32)
    biases = (0.1 * mrng.standard_normal((L, H))).astype(np.float32)
    rng = _rng(seed, 0xDEC0)
    pool = rng.random((min(capacity, 1 << 16), H), dtype=np.float32)
    pool *= 2
    pool -= 1
    rows = np.arange(capacity) if capacity <= 1 << 16 else rng.integers(0, 1 << 16, capacity)
    return {"x": _decode_rows(pool, gains, weights, biases)[rows[:n]]}


ORACLES = {"scan": scan, "resident": resident, "join": join, "fixpoint": fixpoint,
           "converge": converge, "decode": decode}
