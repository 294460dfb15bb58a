"""The gradient's products R W and R^T A over R's nonzeros (mechanisms.py's loops path, for a
step whose residuals R are mostly zero: TopK at K = m/4 leaves 5-10 % of R nonzero, the
diagonal and the few pairs that still interfere). Input by input, its row of R W is a sum of
a few whole rows of W (vectorised, W's rows read in order), and its row of R^T A a sum over
the few inputs whose residual reaches it of their kept activations (kept_selection.kept_lists'
values): the work goes with R's nonzeros times m rather than with the kept units times n, as
in kept_products.py, which the loops path takes when R is denser."""

from __future__ import annotations

from numba import njit

from sparsity_gui.core.interference.kept_selection import in_band


@njit(cache=True, nogil=True)
def residual_lists(R, rowptr, rowcol, rowval, colptr, colrow, colval, count):
    """R's nonzeros by row (rowptr, rowcol, rowval: each row's columns in increasing order)
    and by column (colptr, colrow, colval: each column's rows in increasing order). Returns
    how many there are."""
    n = R.shape[0]
    count[:n] = 0
    e = 0
    for i in range(n):  # each written, the end moving on where nonzero: no branch
        rowptr[i] = e
        for j in range(n):
            r = R[i, j]
            on = r != 0.0
            rowcol[e] = j
            rowval[e] = r
            count[j] += 1 if on else 0
            e += 1 if on else 0
    rowptr[n] = e
    colptr[0] = 0
    for j in range(n):
        colptr[j + 1] = colptr[j] + count[j]
        count[j] = colptr[j]  # from here on: where column j's next row goes
    for i in range(n):  # in increasing i, so each column's rows come in order
        for f in range(rowptr[i], rowptr[i + 1]):
            j = rowcol[f]
            at = count[j]
            colrow[at] = i
            colval[at] = rowval[f]
            count[j] = at + 1
    return e


@njit(cache=True, nogil=True, error_model="numpy")
def _sum_of_rows(X, rows, weights, first, last, out):
    """out = sum over f in [first, last) of weights[f] X[rows[f]]: four rows of X a pass."""
    out[:] = 0.0
    f = first
    while f + 4 <= last:
        x1, x2, x3, x4 = X[rows[f]], X[rows[f + 1]], X[rows[f + 2]], X[rows[f + 3]]
        r1, r2, r3, r4 = weights[f], weights[f + 1], weights[f + 2], weights[f + 3]
        for q in range(out.shape[0]):
            out[q] = out[q] + r1 * x1[q] + r2 * x2[q] + r3 * x3[q] + r4 * x4[q]
        f += 4
    while f < last:
        r, x = weights[f], X[rows[f]]
        for q in range(out.shape[0]):
            out[q] += r * x[q]
        f += 1


@njit(cache=True, nogil=True, error_model="numpy")
def fill_activations(A, kptr, kcol, kval):
    """A = the activations, H at each input's kept units (kptr, kcol, kval) and 0 elsewhere."""
    A[:, :] = 0.0
    for i in range(A.shape[0]):
        a = A[i]
        for f in range(kptr[i], kptr[i + 1]):
            a[kcol[f]] = kval[f]


@njit(cache=True, nogil=True, error_model="numpy")
def residual_products(W, H, A, R_lists, rptr, rcol, push, rw, theta, dtheta, eps, l0, jump):
    """push = (mask * R W + R^T A) / 4 over R's nonzeros (R_lists: residual_lists' six
    arrays) and the activations A (fill_activations), input by input: row i of R W is the
    sum of the rows of W that R_i reaches, row i of R^T A that of the rows of A whose
    residual reaches i (whole rows: blocks of units that stay in the cache measured slower
    here). rptr, rcol (kept_selection.kept_lists): the units where the gradient needs R W;
    H the hidden layer; for JumpReLU dtheta[k] (mechanisms.py's docstring) from R W in the
    kernel's band. rw: scratch of m."""
    rowptr, rowcol, rowval, colptr, colrow, colval = R_lists
    n, m = W.shape
    if jump:
        dtheta[:] = 0.0
    for i in range(n):
        _sum_of_rows(W, rowcol, rowval, rowptr[i], rowptr[i + 1], rw)
        out = push[i]
        _sum_of_rows(A, colrow, colval, colptr[i], colptr[i + 1], out)
        hi = H[i]
        for f in range(rptr[i], rptr[i + 1]):  # mask * R W, and the kernel's band
            q = rcol[f]
            x = hi[q]
            th = theta[q]
            if not jump or abs(x) > th:
                out[q] += rw[q]
            if jump and in_band(x, th, eps):
                sx = (1.0 if x > 0.0 else 0.0) - (1.0 if x < 0.0 else 0.0)
                dtheta[q] += -rw[q] * sx * th / eps - l0 / eps
        for q in range(m):
            out[q] *= 0.25
