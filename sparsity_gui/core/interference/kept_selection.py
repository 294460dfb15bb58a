"""Which hidden units each input keeps under TopK and JumpReLU (mechanisms.py): TopK's k-th
largest |h| of each row, the masks, JumpReLU's kernel band, and the lists of kept units that the
products over them read (kept_products.py), built in the same pass over the hidden layer as
the mask (`kept_lists`) so that the loops take one pass over H where a mask and then its
lists took two."""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _kth_largest(buf, k):
    """The k-th largest of buf (reordered in place): Hoare's quickselect, median-of-three
    pivots (np.partition in numba allocates and was 5x slower here)."""
    lo, hi = 0, buf.shape[0] - 1
    want = k - 1  # its index in decreasing order
    while lo < hi:
        mid = (lo + hi) // 2
        a, b, c = buf[lo], buf[mid], buf[hi]
        pivot = max(min(a, b), min(max(a, b), c))
        i, j = lo, hi
        while i <= j:
            while buf[i] > pivot:
                i += 1
            while buf[j] < pivot:
                j -= 1
            if i <= j:
                buf[i], buf[j] = buf[j], buf[i]
                i += 1
                j -= 1
        if want <= j:
            hi = j
        elif want >= i:
            lo = i
        else:
            break
    return buf[want]


@njit(cache=True, nogil=True, error_model="numpy")
def _kth_in_band(w, k, lo, hi, buf):
    """The k-th largest |w_q| if it lies in [lo, hi]: one pass counts the values above hi and
    gathers those in [lo, hi] (without a branch: each is written, the count moves on for
    those in the band), a quickselect over the gathered alone; -1.0 when it does not lie
    there (or w holds a NaN)."""
    above = 0
    gathered = 0
    nan = 0
    for q in range(w.shape[0]):
        x = abs(w[q])
        above += 1 if x > hi else 0
        nan += 1 if x != x else 0
        buf[gathered] = x
        gathered += 1 if (x >= lo and x <= hi) else 0
    if nan > 0 or not (above < k and k <= above + gathered):
        return -1.0
    return _kth_largest(buf[:gathered], k - above)


@njit(cache=True, nogil=True, error_model="numpy")
def _kth_largest_abs(w, k, last, width, buf):
    """(the k-th largest |w_q|, the band to search around it next time). Searched first in
    the band last -/+ width (W moves little in a step: one pass and a quickselect over a few
    values), then in bands 4 and 16 times as wide, then over the whole row: exact either way."""
    if math.isfinite(last) and math.isfinite(width):
        wide = width
        for _ in range(3):
            t = _kth_in_band(w, k, last - wide, last + wide, buf)
            if t >= 0.0:
                return t, max(0.75 * wide, 8.0 * abs(t - last))
            wide *= 4.0
    for q in range(w.shape[0]):
        buf[q] = abs(w[q])
    t = _kth_largest(buf, k)
    return t, max(8.0 * abs(t - last) if math.isfinite(last) else 0.0, 1e-3 * t)


@njit(cache=True, nogil=True, error_model="numpy")
def topk_mask(W, k, mask, kth, width):
    """mask[i] = 1 on the k largest |W_ik| of row i (ties: the lower index kept), else 0;
    kth[i] = the k-th largest |W_ik| (the threshold TopK applies), found from the last
    call's kth[i] and width[i] (_kth_largest_abs). Returns the units kept."""
    n, m = W.shape
    buf = np.empty(m)
    for i in range(n):
        t, width[i] = _kth_largest_abs(W[i], k, kth[i], width[i], buf)
        kept = 0
        for q in range(m):
            on = abs(W[i, q]) >= t
            mask[i, q] = 1.0 if on else 0.0
            kept += 1 if on else 0
        for q in range(m - 1, -1, -1):  # ties at t past the k-th: the higher indices dropped
            if kept <= k:
                break
            if abs(W[i, q]) == t:
                mask[i, q] = 0.0
                kept -= 1
        kth[i] = t
    return n * k


@njit(cache=True, nogil=True)
def jump_mask(W, theta, mask):
    """mask[i, k] = H(|W_ik| - theta_k) (H(0) = 0). Returns the units kept."""
    n, m = W.shape
    kept = 0
    for i in range(n):
        for k in range(m):
            on = abs(W[i, k]) > theta[k]
            mask[i, k] = 1.0 if on else 0.0
            kept += 1 if on else 0
    return kept


# a |d| past eps / 2 by more than rounding cannot divide to under 1/2
_NEAR_BAND = 0.5000001


@njit(cache=True, nogil=True, error_model="numpy")
def in_band(x, theta, eps):
    """K((|x| - theta) / eps) != 0: the rectangle kernel's support (the division only near
    it)."""
    d = abs(x) - theta
    return abs(d) < _NEAR_BAND * eps and abs(d / eps) < 0.5


@njit(cache=True, nogil=True, error_model="numpy")
def _topk_row(h, k, t, rcol, rval, count, start):
    """Row h's kept units, |h_q| >= t, written (q, h_q) at rcol, rval from ``start`` in
    increasing q and counted in count[q]; ties at t past the k-th dropped from the highest
    index (topk_mask's rule). Returns the row's end."""
    e = start
    for q in range(h.shape[0]):  # each written, the end moving on where kept: no branch
        x = h[q]
        on = abs(x) >= t
        rcol[e] = q
        rval[e] = x
        count[q] += 1 if on else 0
        e += 1 if on else 0
    drop = e - start - k
    if drop <= 0:
        return e
    end = e
    for j in range(end - 1, start - 1, -1):  # the highest-index ties
        q = rcol[j]
        if drop > 0 and abs(h[q]) == t:
            count[q] -= 1
            rcol[j] = -1
            drop -= 1
    e = start
    for j in range(start, end):
        if rcol[j] >= 0:
            rcol[e] = rcol[j]
            rval[e] = rval[j]
            e += 1
    return e


@njit(cache=True, nogil=True, error_model="numpy")
def _jump_row(h, theta, eps, rcol, kcol, kval, count, start, kstart):
    """Row h's units where the gradient needs (R W)_iq, kept (|h_q| > theta_q) or near the
    kernel's band (in_band tells those apart later), written at rcol from ``start`` and
    counted in count[q]; the kept alone, (q, h_q), at kcol, kval from ``kstart``. Returns
    both ends."""
    e = start
    c = kstart
    for q in range(h.shape[0]):  # each written, the ends moving on: no branch
        x = h[q]
        th = theta[q]
        on = abs(x) > th
        need = on or abs(abs(x) - th) < _NEAR_BAND * eps
        rcol[e] = q
        kcol[c] = q
        kval[c] = x
        count[q] += 1 if need else 0
        e += 1 if need else 0
        c += 1 if on else 0
    return e, c


@njit(cache=True, nogil=True, error_model="numpy")
def kept_lists(H, jump, k, theta, eps, kth, width, rptr, rcol, kptr, kcol, kval, count, buf):
    """In one pass over the hidden layer H: by input, the units where the gradient needs
    (R W)_iq (rptr, rcol), the kept units alone and H there (kptr, kcol, kval; TopK needs
    only the units it keeps: give it kptr, kcol = rptr, rcol), and count[q] the inputs
    that need unit q. TopK's kept units and kth, width as topk_mask's; JumpReLU's as
    jump_mask's. Returns the units kept."""
    n = H.shape[0]
    count[:] = 0
    e = 0
    c = 0
    for i in range(n):
        rptr[i] = e
        kptr[i] = c
        if jump:
            e, c = _jump_row(H[i], theta, eps, rcol, kcol, kval, count, e, c)
        else:
            t, width[i] = _kth_largest_abs(H[i], k, kth[i], width[i], buf)
            kth[i] = t
            e = _topk_row(H[i], k, t, rcol, kval, count, e)
            c = e
    rptr[n] = e
    kptr[n] = c
    return c


@njit(cache=True, nogil=True, error_model="numpy")
def by_unit(H, jump, theta, rptr, rcol, count, cptr, crow, cw, ckept):
    """The lists by input (kept_lists) turned by unit: unit q's inputs crow[cptr[q]:
    cptr[q + 1]] in increasing order, with H and whether it is kept there beside (cw, ckept,
    read in order later rather than down H's columns). ``count`` (kept_lists') is used up."""
    m = count.shape[0]
    cptr[0] = 0
    for q in range(m):
        cptr[q + 1] = cptr[q] + count[q]
        count[q] = cptr[q]  # from here on: where unit q's next input goes
    for i in range(rptr.shape[0] - 1):  # in increasing i, so each unit's inputs come in order
        for e in range(rptr[i], rptr[i + 1]):
            q = rcol[e]
            at = count[q]
            x = H[i, q]
            crow[at] = i
            cw[at] = x
            ckept[at] = 1 if (not jump or abs(x) > theta[q]) else 0
            count[q] = at + 1
