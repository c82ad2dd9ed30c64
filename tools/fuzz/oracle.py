"""Reference results for the API fuzzer, from torch and from the specs.

Two references, independent of ovpool's code:

* ``torch.nn.functional`` where it implements the same semantics: adaptive
  average and max pools (values and per-plane indices), average pools without
  dilation and max pools with symmetric pads of at most half the kernel,
  ceil mode as PyTorch's (= ONNX since opset 19 = OpenVINO's ``ceil_torch``).
* A direct numpy evaluation of the spec text (ONNX AveragePool / MaxPool /
  LpPool / MaxUnpool / Global*Pool, OpenVINO AvgPool / MaxPool / Adaptive*Pool,
  with ovpool's documented choices where the specs leave a case open, see
  ``ovpool.ops`` and ``ovpool.ov_ops``): every window is gathered tap by tap
  (``o*stride - pad_begin + t*dilation``), in float64. It covers what torch
  does not (asymmetric pads, auto_pad, dilated averages, LpPool, indices
  layouts); where both apply the fuzzer checks the two against each other.

Every function takes already-normalised arguments (tuples of Python ints)
and returns ``None`` where the spec makes the call an error (an empty window
where ovpool refuses one, an output size < 1), or raises :class:`Unchecked`
where this module does not know the answer (too large to gather, a case
ovpool documents as OpenVINO's own behaviour that is not written down here).
"""

from __future__ import annotations

import functools
import math

import numpy as np

MAX_GATHER = 1 << 21  # elements of the gathered windows this oracle builds at most


class Unchecked(Exception):
    """No reference for this call."""


# --------------------------------------------------------------------------
# window geometry, written from the spec text
# --------------------------------------------------------------------------


def axis_geometry(n_in, k, s, d, pb, pe, auto_pad, rounding):
    """(n_out, pad_begin, pad_end) of one axis; n_out < 1 is an error."""
    ek = (k - 1) * d + 1
    if auto_pad in ("same_upper", "same_lower"):
        n_out = -(-n_in // s)
        total = max((n_out - 1) * s + ek - n_in, 0)
        if auto_pad == "same_upper":
            return n_out, total // 2, total - total // 2
        return n_out, total - total // 2, total // 2
    if auto_pad == "valid":
        pb = pe = 0
    span = n_in + pb + pe - ek
    if span < 0:
        return 0, pb, pe
    if rounding == "floor":
        return span // s + 1, pb, pe
    n_out = -(-span // s) + 1
    # ceil_torch (ONNX ceil_mode, PyTorch): the last window may not start in the right padding
    if rounding == "ceil_torch" and (n_out - 1) * s >= n_in + pb:
        n_out -= 1
    return n_out, pb, pe


def _fixed_taps(n_in, n_out, k, s, d, pb, pe):
    o = np.arange(n_out, dtype=np.int64)[:, None]
    t = np.arange(k, dtype=np.int64)[None, :]
    pos = o * s - pb + t * d
    inside = (pos >= 0) & (pos < n_in)
    declared = (pos >= -pb) & (pos < n_in + pe)
    return pos, inside, declared


def _adaptive_taps(n_in, n_out):
    o = np.arange(n_out, dtype=np.int64)
    start = (o * n_in) // n_out
    end = -((-(o + 1) * n_in) // n_out)
    k = int((end - start).max())
    t = np.arange(k, dtype=np.int64)[None, :]
    pos = start[:, None] + t
    inside = t < (end - start)[:, None]
    return pos, inside


def _gather(x, taps):
    """x (N, C, *spatial) float64 and per axis (pos, inside) of shape (o_a, k_a)
    -> values (N, C, *o, K), inside (*o, K), flat spatial index (*o, K); K runs
    over the window's taps in row-major window order."""
    n = len(taps)
    outs = [p.shape[0] for p, _ in taps]
    ks = [p.shape[1] for p, _ in taps]
    total = x.shape[0] * x.shape[1] * math.prod(outs) * math.prod(ks)
    if total > MAX_GATHER:
        raise Unchecked(f"{total} gathered elements")
    spatial = x.shape[2:]
    g = x
    for a, (pos, _) in enumerate(taps):
        g = np.take(g, np.clip(pos, 0, max(spatial[a] - 1, 0)), axis=2 + 2 * a)
    order = list(range(2)) + [2 + 2 * a for a in range(n)] + [3 + 2 * a for a in range(n)]
    g = g.transpose(order).reshape(x.shape[:2] + tuple(outs) + (-1,))
    inside = np.ones((1,) * (2 * n), bool)
    flat = np.zeros((1,) * (2 * n), np.int64)
    stride = 1
    for a in reversed(range(n)):
        pos, ins = taps[a]
        shape = [1] * (2 * n)
        shape[2 * a], shape[2 * a + 1] = pos.shape
        inside = inside & ins.reshape(shape)
        flat = flat + pos.reshape(shape) * stride
        stride *= spatial[a]
    order = [2 * a for a in range(n)] + [2 * a + 1 for a in range(n)]
    inside = np.broadcast_to(inside, _full(taps)).transpose(order).reshape(tuple(outs) + (-1,))
    flat = np.broadcast_to(flat, _full(taps)).transpose(order).reshape(tuple(outs) + (-1,))
    return g, inside, flat


def _full(taps):
    shape = []
    for pos, _ in taps:
        shape.extend(pos.shape)
    return tuple(shape)


def _max_and_index(g, inside, flat):
    """Max over the inside taps; NaN wins (the last NaN); ties: the first."""
    valid = np.broadcast_to(inside, g.shape)
    isnan = np.isnan(g) & valid
    masked = np.where(valid & ~isnan, g, -np.inf)
    best = masked.max(axis=-1)
    k = g.shape[-1]
    hit = valid & ~isnan & (masked == best[..., None])
    first = np.argmax(hit, axis=-1)
    last_nan = k - 1 - np.argmax(isnan[..., ::-1], axis=-1)
    any_nan = isnan.any(axis=-1)
    index = np.where(any_nan, last_nan, first)
    values = np.where(any_nan, np.nan, best)
    flat_b = np.broadcast_to(flat, g.shape)
    return values, np.take_along_axis(flat_b, index[..., None], axis=-1)[..., 0]


# --------------------------------------------------------------------------
# the ops
# --------------------------------------------------------------------------


def fixed_pool(
    x,
    kind,
    kernel,
    strides,
    dilations,
    pads_begin,
    pads_end,
    auto_pad,
    rounding,
    *,
    count_include_pad=False,
    p=2.0,
    empty="error",
):
    """ONNX / OpenVINO fixed-window pools in float64.

    ``kind``: "avg", "max" (values, spatial flat indices per plane) or "lp".
    ``empty``: what a window with no input tap gives: "error" (None is
    returned, as ovpool refuses such a call) or "unchecked".
    Returns the values (and indices for max) or None.
    """
    spatial = x.shape[2:]
    if max(
        tuple(kernel) + tuple(strides) + tuple(dilations) + tuple(pads_begin) + tuple(pads_end)
    ) > 1 << 40 or any((k - 1) * d + 1 > 1 << 40 for k, d in zip(kernel, dilations)):
        raise Unchecked("arguments beyond 2**40 (ovpool's documented cap)")
    outs = output_spatial(
        spatial, kernel, strides, dilations, pads_begin, pads_end, auto_pad, rounding
    )
    if min(outs) < 1:
        return None
    if math.prod(outs) * math.prod(kernel) * x.shape[0] * x.shape[1] > MAX_GATHER:
        raise Unchecked("too large to gather")
    taps, declared_counts, outs = [], [], []
    for a, n_in in enumerate(spatial):
        n_out, pb, pe = axis_geometry(
            n_in,
            kernel[a],
            strides[a],
            dilations[a],
            pads_begin[a],
            pads_end[a],
            auto_pad,
            rounding,
        )
        if n_out < 1:
            return None
        pos, inside, declared = _fixed_taps(
            n_in, n_out, kernel[a], strides[a], dilations[a], pb, pe
        )
        taps.append((pos, inside))
        declared_counts.append(declared.sum(axis=1))
        outs.append(n_out)
    g, inside, flat = _gather(x, taps)
    count = inside.sum(axis=-1)
    if kind != "lp" and (count == 0).any() and not (kind == "avg" and count_include_pad):
        if empty == "error":
            return None
        raise Unchecked("a window with no input element")
    if kind == "max":
        return _max_and_index(g, inside, flat)
    valid = np.broadcast_to(inside, g.shape)
    if kind == "lp":
        with np.errstate(over="ignore"):
            s = np.where(valid, np.abs(g) ** p, 0).sum(axis=-1)
            return s ** (1.0 / p)
    s = np.where(valid, g, 0).sum(axis=-1)
    if count_include_pad:
        divisor = functools.reduce(np.multiply.outer, [np.maximum(c, 1) for c in declared_counts])
    else:
        divisor = count
    with np.errstate(invalid="ignore", divide="ignore"):
        return s / divisor


def output_spatial(spatial, kernel, strides, dilations, pads_begin, pads_end, auto_pad, rounding):
    return tuple(
        axis_geometry(
            n, kernel[a], strides[a], dilations[a], pads_begin[a], pads_end[a], auto_pad, rounding
        )[0]
        for a, n in enumerate(spatial)
    )


def adaptive_pool(x, kind, output_size):
    """(values) or (values, per-plane indices) of OpenVINO's adaptive pools."""
    if math.prod(output_size) * x.shape[0] * x.shape[1] > MAX_GATHER:
        raise Unchecked("too large to gather")
    taps = [_adaptive_taps(n, o) for n, o in zip(x.shape[2:], output_size)]
    g, inside, flat = _gather(x, taps)
    if kind == "max":
        return _max_and_index(g, inside, flat)
    valid = np.broadcast_to(inside, g.shape)
    return np.where(valid, g, 0).sum(axis=-1) / inside.sum(axis=-1)


def global_pool(x, kind, p=2.0):
    axes = tuple(range(2, x.ndim))
    if kind == "avg":
        return x.mean(axis=axes, keepdims=True)
    if kind == "max":
        return x.max(axis=axes, keepdims=True)
    with np.errstate(over="ignore"):
        return (np.abs(x) ** p).sum(axis=axes, keepdims=True) ** (1.0 / p)


def max_unpool(x, indices, default_shape, full_shape, relative_to):
    """ONNX MaxUnpool: zeros, then x scattered at the flat indices (the last wins)."""
    index_shape = default_shape if relative_to == "default_shape" else full_shape
    space = math.prod(index_shape)
    flat_x = x.reshape(-1)
    flat_i = indices.reshape(-1).astype(np.int64)
    if ((flat_i < 0) | (flat_i >= space)).any():
        return None
    if math.prod(full_shape) > MAX_GATHER:
        raise Unchecked("output too large")
    out = np.zeros(math.prod(full_shape), dtype=np.float64)
    if index_shape != full_shape:
        flat_i = np.ravel_multi_index(np.unravel_index(flat_i, index_shape), full_shape)
    for v, i in zip(flat_x, flat_i):
        out[i] = v
    return out.reshape(full_shape)


# --------------------------------------------------------------------------
# torch, where it has the same semantics
# --------------------------------------------------------------------------


def torch_adaptive(x, kind, output_size):
    import torch
    import torch.nn.functional as F

    n = x.ndim - 2
    t = torch.from_numpy(np.ascontiguousarray(x))
    with torch.no_grad():
        if kind == "avg":
            return getattr(F, f"adaptive_avg_pool{n}d")(t, list(output_size)).numpy()
        v, i = getattr(F, f"adaptive_max_pool{n}d")(t, list(output_size), return_indices=True)
        return v.numpy(), i.numpy()


def torch_fixed(
    x,
    kind,
    kernel,
    strides,
    dilations,
    pads_begin,
    pads_end,
    auto_pad,
    rounding,
    count_include_pad=False,
):
    """torch's avg/max pool where its semantics are the spec's, else raise Unchecked.
    Max returns (values, per-plane indices)."""
    import torch
    import torch.nn.functional as F

    n = x.ndim - 2
    if auto_pad in ("same_upper", "same_lower") or rounding == "ceil":
        raise Unchecked("torch has no auto_pad SAME nor OpenVINO's ceil")
    pads = [0] * n if auto_pad == "valid" else list(pads_begin)
    if auto_pad != "valid" and list(pads_begin) != list(pads_end):
        raise Unchecked("torch pads symmetrically")
    if any(2 * p > k for p, k in zip(pads, kernel)):
        raise Unchecked("torch pads at most half the kernel")
    if kind == "avg" and any(d != 1 for d in dilations):
        raise Unchecked("torch's avg_pool has no dilation")
    t = torch.from_numpy(np.ascontiguousarray(x))
    ceil = rounding == "ceil_torch"
    with torch.no_grad():
        try:
            if kind == "avg":
                return getattr(F, f"avg_pool{n}d")(
                    t,
                    list(kernel),
                    list(strides),
                    pads,
                    ceil_mode=ceil,
                    count_include_pad=count_include_pad,
                ).numpy()
            v, i = getattr(F, f"max_pool{n}d")(
                t,
                list(kernel),
                list(strides),
                pads,
                list(dilations),
                ceil_mode=ceil,
                return_indices=True,
            )
            return v.numpy(), i.numpy()
        except RuntimeError as exc:
            raise Unchecked(f"torch refused: {exc}") from None
