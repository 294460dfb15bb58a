"""The gradient's products over the kept units (mechanisms.py's loops path, for a mask that
keeps few units): Z = A W^T over each input's kept units, and unit by unit R W where the
gradient uses it beside R^T A, written straight into the push. The lists they read are
kept_selection.kept_lists' and by_unit's."""

from __future__ import annotations

from numba import njit

from sparsity_gui.core.interference.kept_selection import in_band


@njit(cache=True, nogil=True)
def transpose_into(src, dst, scale):
    """dst = scale src^T, by square tiles (a strided copy of the whole would miss the cache)."""
    n, m = src.shape
    tile = 8  # 32 rows at a power-of-two stride thrash the cache sets: 3x slower here
    for i0 in range(0, n, tile):
        for k0 in range(0, m, tile):
            for k in range(k0, min(k0 + tile, m)):
                for i in range(i0, min(i0 + tile, n)):
                    dst[k, i] = scale * src[i, k]


# kept_gram's units a block: their rows of W^T (128 x n) stay in the cache for every input
GRAM_UNITS_A_BLOCK = 128


@njit(cache=True, nogil=True, error_model="numpy")
def _add_eight(z, WT, kcol, kval, e):
    """z += the eight kept units from e on, each a_u W^T_u: one pass over z for eight."""
    w1, w2, w3, w4 = WT[kcol[e]], WT[kcol[e + 1]], WT[kcol[e + 2]], WT[kcol[e + 3]]
    w5, w6, w7, w8 = WT[kcol[e + 4]], WT[kcol[e + 5]], WT[kcol[e + 6]], WT[kcol[e + 7]]
    a1, a2, a3, a4 = kval[e], kval[e + 1], kval[e + 2], kval[e + 3]
    a5, a6, a7, a8 = kval[e + 4], kval[e + 5], kval[e + 6], kval[e + 7]
    for j in range(z.shape[0]):
        z[j] = (
            z[j] + a1 * w1[j] + a2 * w2[j] + a3 * w3[j] + a4 * w4[j] + a5 * w5[j] + a6 * w6[j] + a7 * w7[j]
        ) + a8 * w8[j]


@njit(cache=True, nogil=True, error_model="numpy")
def kept_gram(WT, kptr, kcol, kval, Z, cursor):
    """Z = A W^T over the kept units of each input (kptr, kcol; kval: H there),
    summed in increasing unit order: by blocks of units (their rows of W^T stay in the
    cache for every input), eight units a pass over Z's row."""
    m, n = WT.shape
    Z[:, :] = 0.0
    cursor[:n] = kptr[:n]
    for k0 in range(0, m, GRAM_UNITS_A_BLOCK):
        end = k0 + GRAM_UNITS_A_BLOCK
        for i in range(n):
            z = Z[i]
            e, last = cursor[i], kptr[i + 1]
            while e + 8 <= last and kcol[e + 7] < end:
                _add_eight(z, WT, kcol, kval, e)
                e += 8
            while e < last and kcol[e] < end:  # fewer than eight left in the block
                a, w = kval[e], WT[kcol[e]]
                for j in range(n):
                    z[j] += a * w[j]
                e += 1
            cursor[i] = e


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc", "nsz", "contract"})
def _unit_products(wk, R, crow, cw, ckept, first, last, acc, rws):
    """Unit k (W^T_k = wk, its inputs crow[first:last]): rws = R_i . wk for each (summed
    in whatever order vectorises, as BLAS's products are) and acc = sum over the kept
    inputs of H_ik R_i + their R W: column k of R^T A + mask * R W. Four inputs a pass."""
    n = wk.shape[0]
    acc[:] = 0.0
    e = first
    while e + 4 <= last:
        r1, r2, r3, r4 = R[crow[e]], R[crow[e + 1]], R[crow[e + 2]], R[crow[e + 3]]
        a1 = cw[e] if ckept[e] != 0 else 0.0
        a2 = cw[e + 1] if ckept[e + 1] != 0 else 0.0
        a3 = cw[e + 2] if ckept[e + 2] != 0 else 0.0
        a4 = cw[e + 3] if ckept[e + 3] != 0 else 0.0
        d1 = d2 = d3 = d4 = 0.0
        for j in range(n):
            w = wk[j]
            d1 += r1[j] * w
            d2 += r2[j] * w
            d3 += r3[j] * w
            d4 += r4[j] * w
            acc[j] = acc[j] + a1 * r1[j] + a2 * r2[j] + a3 * r3[j] + a4 * r4[j]
        at = e - first
        rws[at], rws[at + 1], rws[at + 2], rws[at + 3] = d1, d2, d3, d4
        e += 4
    while e < last:
        r = R[crow[e]]
        a = cw[e] if ckept[e] != 0 else 0.0
        d = 0.0
        for j in range(n):
            d += r[j] * wk[j]
            acc[j] += a * r[j]
        rws[e - first] = d
        e += 1
    for e in range(first, last):  # the kept units' R W beside their R^T A
        if ckept[e] != 0:
            acc[crow[e]] += rws[e - first]


# kept_products' units a tile: their columns of the push are written together, a cache
# line of each row (the push's rows are a power-of-two stride apart: see transpose_into)
PUSH_UNITS_A_TILE = 8


@njit(cache=True, nogil=True, error_model="numpy")
def kept_products(WT, R, cptr, crow, cw, ckept, push, tile, rws, theta, dtheta, eps, l0, jump):
    """push = (mask * R W + R^T A) / 4, unit by unit (_unit_products) over the lists by unit
    (by_unit: the inputs that need each, H and the mask there), a tile of
    PUSH_UNITS_A_TILE units at a time transposed into the push; for JumpReLU dtheta[k]
    (mechanisms.py's docstring) from R W in the kernel's band."""
    m, n = WT.shape
    if jump:
        dtheta[:] = 0.0
    for k0 in range(0, m, PUSH_UNITS_A_TILE):
        k1 = min(k0 + PUSH_UNITS_A_TILE, m)
        for k in range(k0, k1):
            first, last = cptr[k], cptr[k + 1]
            _unit_products(WT[k], R, crow, cw, ckept, first, last, tile[k - k0], rws)
            if jump:
                th = theta[k]
                for e in range(first, last):
                    x = cw[e]
                    if in_band(x, th, eps):
                        sx = (1.0 if x > 0.0 else 0.0) - (1.0 if x < 0.0 else 0.0)
                        dtheta[k] += -rws[e - first] * sx * th / eps - l0 / eps
        for i in range(n):
            for k in range(k0, k1):
                push[i, k] = 0.25 * tile[k - k0, i]
