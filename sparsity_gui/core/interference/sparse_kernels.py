"""gd-zero with interference on W's nonzeros alone (InterferenceRun's sparse path), and the
loss's interference term from them. Formulas: docs/theory.md §5; the dense step they equal:
kernels.train_steps."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from sparsity_gui.core.interference.kernels import (
    STOP_DENSE,
    STOP_GAIN,
    STOP_NONE,
    STOP_NONFINITE,
    STOP_ROOM,
    STOP_WIPED,
)

# --- gd-zero on the nonzeros ----------------------------------------------------------------
#
# Under gd-zero most of W becomes exact zeros. A zero weight w_ik stays zero unless its
# push p_ik = sum_{j != i} ReLU(G_ij) w_jk beats lam, and p_ik is a sum of products
# G_ij w_jk with G_ij = sum_k w_ik w_jk: every term that is not exactly zero involves only
# nonzero weights. So G, the push and the update are computed from the nonzeros alone
# (the pattern: CSR, columns increasing within a row), with the same terms as the dense
# products (only summed in another order), the same per-weight formula as _gd_zero_row,
# and |W_i|^2 summed over the row's nonzeros in index order (bitwise the dense sum: the
# zeros add exact zeros). Entries neither nonzero nor pushed keep their exact zero.


@njit(cache=True, nogil=True)
def nonzero_pattern(W, rptr, rcol):
    """Fill rptr (n + 1) and rcol with W's nonzeros row by row, columns increasing.
    Returns the count, or -1 (nothing usable) when rcol is too short."""
    n, m = W.shape
    nnz = 0
    rptr[0] = 0
    for i in range(n):
        for k in range(m):
            if W[i, k] != 0.0:
                if nnz >= rcol.shape[0]:
                    return -1
                rcol[nnz] = k
                nnz += 1
        rptr[i + 1] = nnz
    return nnz


@njit(cache=True, nogil=True)
def _column_pattern(rptr, rcol, n, m, cptr, crow):
    """The transpose of the pattern: for each column, its rows in increasing order."""
    for k in range(m + 1):
        cptr[k] = 0
    nnz = rptr[n]
    for a in range(nnz):
        cptr[rcol[a] + 1] += 1
    for k in range(m):
        cptr[k + 1] += cptr[k]
    fill = cptr[:m].copy()
    for i in range(n):
        for a in range(rptr[i], rptr[i + 1]):
            k = rcol[a]
            crow[fill[k]] = i
            fill[k] += 1


@njit(cache=True, nogil=True)
def _gram_row(W, i, rptr, rcol, cptr, crow, gacc, gseen, glist, stamp):
    """G_ij = W_i . W_j for every j != i sharing a nonzero column with row i, into gacc;
    returns how many such j, listed in glist[:count]."""
    count = 0
    for a in range(rptr[i], rptr[i + 1]):
        k = rcol[a]
        wik = W[i, k]
        for b in range(cptr[k], cptr[k + 1]):
            j = crow[b]
            if j == i:
                continue
            if gseen[j] != stamp:
                gseen[j] = stamp
                gacc[j] = 0.0
                glist[count] = j
                count += 1
            gacc[j] += wik * W[j, k]
    return count


@njit(cache=True, nogil=True)
def _sort_marked(a, count, seen, stamp):
    """a[:count], the columns marked ``stamp`` in ``seen``, in increasing order, in place:
    an insertion sort when they are few, else a scan of the marks (np.sort was 30x slower)."""
    if count > 32:
        q = 0
        for k in range(seen.shape[0]):
            if seen[k] == stamp:
                a[q] = k
                q += 1
        return
    for q in range(1, count):
        v = a[q]
        r = q - 1
        while r >= 0 and a[r] > v:
            a[r + 1] = a[r]
            r -= 1
        a[r + 1] = v


@njit(cache=True, nogil=True)
def _row_pushes(W, i, rptr, rcol, cptr, crow, gacc, gseen, glist, pseen, pacc, plist):
    """Row i's push sum_{j != i} ReLU(G_ij) W_j on the columns it reaches: pacc[k] for
    the plist[:count] columns marked i in pseen (in the order first reached); returns count."""
    ng = _gram_row(W, i, rptr, rcol, cptr, crow, gacc, gseen, glist, i)
    npush = 0
    for q in range(ng):
        j = glist[q]
        gij = gacc[j]
        if gij > 0.0:
            for c in range(rptr[j], rptr[j + 1]):
                k = rcol[c]
                if pseen[k] != i:
                    pseen[k] = i
                    pacc[k] = 0.0
                    plist[npush] = k
                    npush += 1
                pacc[k] += gij * W[j, k]
    return npush


@njit(cache=True, nogil=True, error_model="numpy")
def _row_update(W, i, rptr, rcol, pptr, pcol, pval, g, eta, h, ncol, nnz):
    """gd-zero's step of row i over the union of its nonzeros and its pushes, columns
    increasing (kernels._gd_zero_row's formula); its nonzeros appended to ncol from nnz.
    Returns (nnz after them, |W_i|^2, weights the push carried across zero)."""
    m = W.shape[1]
    a, a_end = rptr[i], rptr[i + 1]
    b, b_end = pptr[i], pptr[i + 1]
    acc = 0.0
    crossed = 0
    while a < a_end or b < b_end:
        ka = rcol[a] if a < a_end else m
        kb = pcol[b] if b < b_end else m
        p = 0.0
        if kb <= ka:
            k = kb
            p = pval[b]
            b += 1
            if ka == kb:
                a += 1
        else:
            k = ka
            a += 1
        x = W[i, k]
        v = x * g - eta * p
        sx = (1.0 if x > 0.0 else 0.0) - (1.0 if x < 0.0 else 0.0)
        sv = (1.0 if v > 0.0 else 0.0) - (1.0 if v < 0.0 else 0.0)
        sg = sx if x != 0.0 else sv
        crossed += 1 if sg * v < 0.0 else 0
        W[i, k] = sg * max(sg * v - h, 0.0) + 0.0
        w = W[i, k]
        if w != 0.0:
            ncol[nnz] = k
            nnz += 1
            acc += w * w
    return nnz, acc, crossed


@njit(cache=True, nogil=True, error_model="numpy")
def gd_zero_sparse_steps(W, norm2, rptr, rcol, work, pcol, pval, n_steps, lrs, l1s, most_nnz):
    """n_steps of gd-zero with interference, following W's nonzeros; the same step as
    interference_push + train_steps(opt gd-zero) up to the order of summation in the
    products (step s with lrs[s], l1s[s]). (rptr, rcol) is W's pattern (nonzero_pattern)
    and is kept current; ``work`` is int64 scratch of 3 n + 3 m + 2 + rcol's length;
    pcol/pval hold one step's pushes. Returns (steps taken, stop, nonzeros): stop as
    train_steps', or STOP_DENSE (the nonzeros grew past ``most_nnz``: carry on densely)
    or STOP_ROOM (rcol or pcol too short for the next step: grow them and call again);
    with either, W is the state after the steps taken."""
    n, m = W.shape
    cap = rcol.shape[0]
    pcap = pcol.shape[0]
    # work: cptr (m + 1) | crow (cap) | gseen (n) | glist (n) | pseen (m) | plist (m) | pptr (n + 1)
    cptr = work[: m + 1]
    crow = work[m + 1 : m + 1 + cap]
    o = m + 1 + cap
    gseen = work[o : o + n]
    glist = work[o + n : o + 2 * n]
    o += 2 * n
    pseen = work[o : o + m]
    plist = work[o + m : o + 2 * m]
    pptr = work[o + 2 * m : o + 2 * m + n + 1]
    gacc = np.zeros(n)
    pacc = np.zeros(m)
    ncol = np.empty(cap, dtype=rcol.dtype)
    nptr = np.zeros(n + 1, dtype=rptr.dtype)
    for s in range(n_steps):
        eta = 4.0 * lrs[s]
        h = lrs[s] * l1s[s]
        for i in range(n):
            if not (1.0 + eta * (1.0 - norm2[i]) > 0.0):
                return s, STOP_GAIN, rptr[n]
        # 1. the pushes of every row, from the old W
        _column_pattern(rptr, rcol, n, m, cptr, crow)
        gseen[:] = -1
        pseen[:] = -1
        pptr[0] = 0
        for i in range(n):
            npush = _row_pushes(W, i, rptr, rcol, cptr, crow, gacc, gseen, glist, pseen, pacc, plist)
            if pptr[i] + npush > pcap:
                return s, STOP_ROOM, rptr[n]
            _sort_marked(plist, npush, pseen, i)
            for q in range(npush):
                pcol[pptr[i] + q] = plist[q]
                pval[pptr[i] + q] = pacc[plist[q]]
            pptr[i + 1] = pptr[i] + npush
        if min(rptr[n] + pptr[n], n * m) > cap:  # the new pattern might not fit
            return s, STOP_ROOM, rptr[n]
        # 2. the update, row by row over the union of nonzeros and pushes, columns increasing
        wiped = False
        nnz = 0
        for i in range(n):
            g = 1.0 + eta * (1.0 - norm2[i])
            nnz, acc, crossed = _row_update(W, i, rptr, rcol, pptr, pcol, pval, g, eta, h, ncol, nnz)
            nptr[i + 1] = nnz
            norm2[i] = acc
            if crossed > 0 and acc == 0.0:
                wiped = True
        rptr[:] = nptr
        rcol[:nnz] = ncol[:nnz]
        if wiped:
            return s + 1, STOP_WIPED, nnz
        for i in range(n):
            if not math.isfinite(norm2[i]):
                return s + 1, STOP_NONFINITE, nnz
        if nnz > most_nnz:
            return s + 1, STOP_DENSE, nnz
    return n_steps, STOP_NONE, rptr[n]


@njit(cache=True, nogil=True)
def positive_overlaps_squared(W, rptr, rcol):
    """sum_{i != j} ReLU(W_i . W_j)^2 from the nonzeros (the loss's interference term)."""
    n, m = W.shape
    nnz = rptr[n]
    cptr = np.zeros(m + 1, dtype=np.int64)
    crow = np.empty(nnz, dtype=np.int64)
    _column_pattern(rptr, rcol, n, m, cptr, crow)
    gacc = np.zeros(n)
    gseen = np.full(n, -1, dtype=np.int64)
    glist = np.empty(n, dtype=np.int64)
    total = 0.0
    for i in range(n):
        count = _gram_row(W, i, rptr, rcol, cptr, crow, gacc, gseen, glist, i)
        for q in range(count):
            g = gacc[glist[q]]
            if g > 0.0:
                total += g * g
    return total
