"""The parametric shape families, their analytic SDFs and the measurements (numpy only).

profile2d (default): a 2-D vehicle side profile, p = (length, height, cabin) (spec):
    body  = box centred at (0, 0), half-extents (l/2, h/2)
    cabin = box centred at (-0.1 l/2, h/2 + c/2), half-extents (0.3 l, c/2)
    union with corners rounded by r = 0.03; s_p = min(s_body, s_cabin).
vehicle3d (full only, INFERRED details): the same body and cabin as boxes in 3-D (cabin 0.8 of
    the width) with two wheel-arch cylinders (axis z, at x = +-0.3 l, y = -h/2, radius a) cut
    out, p = (length, height, cabin, width, arch radius).

Points are (x, y[, z]); grids are indexed [y, x] (2-D) or [z, y, x] (3-D) like images.

One change to the spec's SDF, made before any result: the cabin box reaches CABIN_OVERLAP
down into the body. The spec's cabin sits exactly on the body, so min(s_body, s_cabin) is 0 on
the whole shared edge: a zero-level seam *inside* the shape that a decoder would have to learn
(and that splits the occupancy). Burying the cabin's lower edge removes the seam; the outer
shape is unchanged except at the two junction corners (sharp instead of rounded notches).
"""

from __future__ import annotations

import numpy as np

from icml26.vision.images import box_sdf

ROUND = 0.03          # corner radius r
CABIN_OVERLAP = 0.05  # the cabin box reaches this far down into the body (see above)

FAMILIES = {
    "profile2d": {
        "names": ("length", "height", "cabin"),
        "lo": (1.2, 0.30, 0.15),
        "hi": (1.8, 0.50, 0.30),
        # beyond the range: above the maximum for every parameter, below the minimum for
        # length and height (cabin only upward), as the spec says
        "down": (True, True, False),
        "domain": ((-1.6, 1.6), (-0.8, 1.0)),
        "grid": (128, 72),   # points along x, y
    },
    "vehicle3d": {   # INFERRED (full only): ranges, cabin width, arches, domain
        "names": ("length", "height", "cabin", "width", "arch"),
        "lo": (1.2, 0.30, 0.15, 0.60, 0.08),
        "hi": (1.8, 0.50, 0.30, 0.90, 0.14),
        # height only upward here: a lower body with a large arch would be cut in two
        "down": (True, False, False, True, False),
        "domain": ((-1.6, 1.6), (-0.8, 1.0), (-0.8, 0.8)),
        "grid": (64, 64, 64),
    },
}


def family(name: str) -> dict:
    if name not in FAMILIES:
        raise ValueError(f"unknown shape family {name!r}; allowed: {', '.join(FAMILIES)}")
    f = dict(FAMILIES[name])
    f["name"] = name
    f["dim"] = len(f["domain"])
    f["lo"], f["hi"] = np.array(f["lo"]), np.array(f["hi"])
    f["width"] = f["hi"] - f["lo"]
    f["centre"] = (f["lo"] + f["hi"]) / 2
    return f


# ------------------------------------------------------------------------------------------
# SDF
# ------------------------------------------------------------------------------------------
def _parts(fam: dict, P: np.ndarray):
    """Box centres and half-extents (S, d) of body and cabin for parameters P (S, n_params)."""
    P = np.asarray(P, dtype=float)
    length, height, cab = P[:, 0], P[:, 1], P[:, 2]
    zeros = np.zeros_like(length)
    body_c = [zeros, zeros]
    body_h = [length / 2, height / 2]
    # the cabin spans y in [h/2 - overlap, h/2 + c]
    cab_c = [-0.1 * length / 2, height / 2 + (cab - CABIN_OVERLAP) / 2]
    cab_h = [0.3 * length, (cab + CABIN_OVERLAP) / 2]
    if fam["dim"] == 3:
        width = P[:, 3]
        body_c.append(zeros)
        body_h.append(width / 2)
        cab_c.append(zeros)
        cab_h.append(0.4 * width)   # INFERRED: the cabin is 0.8 of the body's width
    st = np.stack
    return st(body_c, -1), st(body_h, -1), st(cab_c, -1), st(cab_h, -1)


def sdf(fam: dict, P: np.ndarray, points: np.ndarray) -> np.ndarray:
    """s_p(x) for shapes P (S, n_params) at points (S, M, d) or shared points (M, d) -> (S, M)."""
    P = np.atleast_2d(np.asarray(P, dtype=float))
    pts = np.asarray(points, dtype=float)
    if pts.ndim == 2:
        pts = pts[None]
    bc, bh, cc, ch = _parts(fam, P)
    s = np.minimum(box_sdf(pts, bc[:, None], bh[:, None], ROUND),
                   box_sdf(pts, cc[:, None], ch[:, None], ROUND))
    if fam["dim"] == 3:
        # wheel arches: cylinders along z at x = +-0.3 l, y = -h/2, radius a, cut out
        length, height, arch = P[:, 0, None], P[:, 1, None], P[:, 4, None]
        dy = pts[..., 1] + height / 2
        for sign in (-1.0, 1.0):
            cyl = np.hypot(pts[..., 0] - sign * 0.3 * length, dy) - arch
            s = np.maximum(s, -cyl)
    return s


# ------------------------------------------------------------------------------------------
# grids and sampling
# ------------------------------------------------------------------------------------------
def axes(fam: dict, grid=None) -> list[np.ndarray]:
    """Coordinates along x, y[, z] of the evaluation grid."""
    grid = fam["grid"] if grid is None else grid
    return [np.linspace(lo, hi, n) for (lo, hi), n in zip(fam["domain"], grid, strict=True)]


def grid_points(fam: dict, grid=None) -> tuple[np.ndarray, tuple]:
    """Grid points (G, d) in (x, y[, z]) order, and the array shape ([z,] y, x) of a field."""
    ax = axes(fam, grid)
    mesh = np.meshgrid(*ax[::-1], indexing="ij")          # [z,] y, x
    pts = np.stack(mesh[::-1], axis=-1)                    # (..., d) as (x, y[, z])
    return pts.reshape(-1, fam["dim"]), pts.shape[:-1]


def latin_hypercube(rng: np.random.Generator, n: int, fam: dict) -> np.ndarray:
    """n points of a Latin hypercube in the training box (one point per stratum and axis)."""
    d = len(fam["lo"])
    u = (np.stack([rng.permutation(n) for _ in range(d)], axis=1) + rng.random((n, d))) / n
    return fam["lo"] + u * fam["width"]


def targets(rng: np.random.Generator, fam: dict, n_interp: int, n_extrap: int,
            levels) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Target parameters (T, n_params), their target-set level (0 for interpolation, else e)
    and the index of the extrapolated parameter (-1 for interpolation).

    Interpolation: uniform in the training box. Extrapolation at level e: one random parameter
    beyond the range by e x (range width), above the maximum or (where allowed) below the
    minimum with equal chance; the others uniform inside the range."""
    d = len(fam["lo"])
    P = [fam["lo"] + rng.random((n_interp, d)) * fam["width"]]
    lev, which = [np.zeros(n_interp)], [np.full(n_interp, -1)]
    for e in levels:
        p = fam["lo"] + rng.random((n_extrap, d)) * fam["width"]
        j = rng.integers(0, d, n_extrap)
        up = rng.random(n_extrap) < 0.5
        for k in range(n_extrap):
            go_up = up[k] or not fam["down"][j[k]]
            p[k, j[k]] = (fam["hi"][j[k]] + e * fam["width"][j[k]] if go_up
                          else fam["lo"][j[k]] - e * fam["width"][j[k]])
        P.append(p)
        lev.append(np.full(n_extrap, float(e)))
        which.append(j)
    return np.concatenate(P), np.concatenate(lev), np.concatenate(which)


def _box_surface(rng, centre, half, n):
    """n points uniform on the surface of each box (S, d) -> (S, n, d)."""
    S, d = centre.shape
    faces = np.stack([np.prod(np.delete(2 * half, k, axis=1), axis=1) for k in range(d)], 1)
    prob = faces / faces.sum(1, keepdims=True)
    k = (rng.random((S, n, 1)) > np.cumsum(prob, 1)[:, None, :]).sum(-1)   # face axis
    u = rng.uniform(-1.0, 1.0, (S, n, d))
    sign = np.where(rng.random((S, n)) < 0.5, -1.0, 1.0)
    np.put_along_axis(u, k[..., None], sign[..., None], axis=-1)
    return centre[:, None] + u * half[:, None]


def surface_points(rng: np.random.Generator, fam: dict, P: np.ndarray, n: int) -> np.ndarray:
    """n points on the zero level set of every shape (S, n, d).

    Candidates are drawn uniformly on the surfaces of the body and cabin boxes (area-weighted);
    those inside the other part are dropped, those off the surface (rounded corners, arches)
    are moved onto it by Newton steps x <- x - s grad s / |grad s|^2; a shape that keeps too few
    reuses its candidates (drawn with replacement)."""
    P = np.atleast_2d(P)
    S, d = len(P), fam["dim"]
    bc, bh, cc, ch = _parts(fam, P)
    area = lambda h: (2 * h).prod(1) * (2 / (2 * h)).sum(1)   # noqa: E731 (surface measure)
    ab, ac = area(bh), area(ch)
    m = 2 * n
    nb = np.round(m * ab / (ab + ac)).astype(int)
    cand = np.empty((S, m, d))
    for s in range(S):
        cand[s, :nb[s]] = _box_surface(rng, bc[s:s + 1], bh[s:s + 1], nb[s])[0]
        cand[s, nb[s]:] = _box_surface(rng, cc[s:s + 1], ch[s:s + 1], m - nb[s])[0]
    val = sdf(fam, P, cand)
    h = 1e-6
    for _ in range(3):
        # only points just outside (rounded corners) or in the cut-outs move; points buried
        # inside the other part (val well below 0) are dropped below
        si, mi = np.nonzero((np.abs(val) > 1e-9) & (val > -1e-3))
        if not len(si):
            break
        q, Pq = cand[si, mi][:, None], P[si]
        grad = np.stack([(sdf(fam, Pq, q + h * e) - sdf(fam, Pq, q - h * e))[:, 0] / (2 * h)
                         for e in np.eye(d)], -1)
        step = val[si, mi] / np.maximum((grad**2).sum(-1), 1e-12)
        cand[si, mi] -= step[:, None] * grad
        val[si, mi] = sdf(fam, Pq, cand[si, mi][:, None])[:, 0]
    out = np.empty((S, n, d))
    for s in range(S):
        keep = np.flatnonzero(np.abs(val[s]) < 1e-6)
        pick = rng.choice(keep, n, replace=len(keep) < n)
        out[s] = cand[s, pick]
    return out


def training_pool(rng: np.random.Generator, fam: dict, P: np.ndarray, n_uniform: int,
                  n_near: int, noise: float) -> tuple[np.ndarray, np.ndarray]:
    """DeepSDF-style point pools of every shape: (S, n_uniform, d+1) uniform points in the
    domain and (S, n_near, d+1) surface points + N(0, noise^2), last column the SDF."""
    P = np.atleast_2d(P)
    S, d = len(P), fam["dim"]
    lo = np.array([a for a, _ in fam["domain"]])
    hi = np.array([b for _, b in fam["domain"]])
    uni = lo + rng.random((S, n_uniform, d)) * (hi - lo)
    near = surface_points(rng, fam, P, n_near) + noise * rng.standard_normal((S, n_near, d))
    return (np.concatenate([uni, sdf(fam, P, uni)[..., None]], -1),
            np.concatenate([near, sdf(fam, P, near)[..., None]], -1))


# ------------------------------------------------------------------------------------------
# measurements of a generated field on the grid
# ------------------------------------------------------------------------------------------
def crossings(field: np.ndarray, coord: np.ndarray, axis: int):
    """Sub-cell positions of the sign changes of fields (S, ...) along ``axis`` (linear
    interpolation of the field between neighbouring grid points; the region outside the grid
    counts as outside the shape, so an occupied edge cell crosses at the edge). Returns the
    crossing coordinates (NaN where there is none) with the grid shape padded by one."""
    f = np.moveaxis(field, axis, -1)
    big = np.full(f.shape[:-1] + (1,), 1e9)
    f = np.concatenate([big, f, big], axis=-1)
    c = np.concatenate([[coord[0]], coord, [coord[-1]]])
    f0, f1 = f[..., :-1], f[..., 1:]
    change = (f0 < 0) != (f1 < 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.clip(f0 / (f0 - f1), 0.0, 1.0)
    pos = c[:-1] + t * (c[1:] - c[:-1])
    return np.where(change, pos, np.nan)


def _extent(field, coord, axis, lead):
    cr = crossings(field, coord, axis)
    flat = cr.reshape(cr.shape[0], -1) if lead else cr.reshape(1, -1)
    has = np.isfinite(flat).any(1)
    lo = np.where(has, np.nanmin(np.where(np.isfinite(flat), flat, np.inf), 1), np.nan)
    hi = np.where(has, np.nanmax(np.where(np.isfinite(flat), flat, -np.inf), 1), np.nan)
    return lo, hi


def measure(fam: dict, fields: np.ndarray) -> np.ndarray:
    """Parameters measured on fields (S, [z,] y, x) of the grid (zero crossings, sub-cell):
    length = x-extent, height = -2 min y, cabin = max y - height/2; 3-D also width = z-extent
    and arch = (lowest crossing along y in the column at x = 0.3 length, z = 0) + height/2.
    An empty shape measures 0 everywhere (a 100% error)."""
    fields = np.asarray(fields, dtype=float)
    ax = axes(fam, fields.shape[1:][::-1])
    d = fam["dim"]
    arr_axis = {k: fields.ndim - 1 - k for k in range(d)}     # coordinate k -> array axis
    xlo, xhi = _extent(fields, ax[0], arr_axis[0], True)
    ylo, yhi = _extent(fields, ax[1], arr_axis[1], True)
    length, height = xhi - xlo, -2 * ylo
    out = [length, height, yhi - height / 2]
    if d == 3:
        zlo, zhi = _extent(fields, ax[2], arr_axis[2], True)
        out.append(zhi - zlo)
        z0 = int(np.argmin(np.abs(ax[2])))
        plane = fields[:, z0]                                   # (S, y, x)
        arch = np.full(len(fields), np.nan)
        for s in range(len(fields)):
            if not np.isfinite(length[s]):
                continue
            x0 = 0.3 * length[s]
            i = int(np.clip(np.searchsorted(ax[0], x0) - 1, 0, len(ax[0]) - 2))
            w = (x0 - ax[0][i]) / (ax[0][i + 1] - ax[0][i])
            lows = []
            for col in (i, i + 1):
                cr = crossings(plane[s, :, col][None], ax[1], 1)[0]
                lows.append(np.nanmin(cr) if np.isfinite(cr).any() else np.nan)
            arch[s] = (1 - w) * lows[0] + w * lows[1] + height[s] / 2
        out.append(arch)
    m = np.stack(out, axis=1)
    return np.where(np.isfinite(m), m, 0.0)


def param_error(measured: np.ndarray, target: np.ndarray, constrained=None) -> np.ndarray:
    """Mean over the constrained parameters of |p_hat - p*| / |p*|, in percent."""
    idx = slice(None) if constrained is None else list(constrained)
    return 100 * np.mean(np.abs(measured[:, idx] - target[:, idx]) / np.abs(target[:, idx]), 1)


def valid(occupancy: np.ndarray) -> np.ndarray:
    """One connected component and no holes, per occupancy map (S, [z,] y, x)."""
    from scipy import ndimage

    from icml26.vision.metrics import count_components

    out = np.zeros(len(occupancy), dtype=bool)
    for s, occ in enumerate(occupancy):
        _, n = count_components(occ)   # full connectivity: 8 in 2-D, 26 in 3-D
        out[s] = n == 1 and bool((ndimage.binary_fill_holes(occ) == occ).all())
    return out


def iou_each(pred: np.ndarray, gt: np.ndarray) -> np.ndarray:
    """IoU of every map of stacks (S, ...) (vision.metrics.iou_per_image on flattened maps)."""
    from icml26.vision.metrics import iou_per_image

    S = len(pred)
    return iou_per_image(pred.reshape(S, 1, -1), gt.reshape(S, 1, -1))
