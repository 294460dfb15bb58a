"""Qt's SVG made plain SVG 1.1, so that librsvg, browsers and Qt draw it alike.

QSvgGenerator writes SVG Tiny 1.2: every shape drawn with a cosmetic pen (all of
pyqtgraph's pens) gets `vector-effect="non-scaling-stroke"` inside a `<g>` whose
`transform` is the item's own, for a curve the map from data coordinates to pixels, e.g.
`matrix(479.676,0,0,-206.954,-341.667,243.444)` around a path in data units. Renderers
without vector-effect (librsvg, ImageMagick, CairoSVG, resvg) scale the stroke with that
matrix and draw each curve as a huge band.

`plain_svg` rewrites the file: each such shape's coordinates are mapped through its group's
matrix into the coordinates of the group's parent (the output's own units: Qt nests no
transforms), the shape moves into a copy of the group without the transform (paint order
kept), and vector-effect is dropped. Strokes, dashes and fills then have the same widths in
every renderer. Groups that only translate keep their transform (a translation scales
nothing). The root becomes version="1.1" without the Tiny profile.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
_SVG = "{" + SVG_NS + "}"
VECTOR_EFFECT = "vector-effect"
_KAPPA = 0.5522847498307936  # control distance of a quarter-ellipse cubic Bézier

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_PATH_TOKEN = re.compile(r"[A-Za-z]|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
# absolute commands and how many coordinate pairs each takes (Qt writes M, L, C and Z)
_PAIRS = {"M": 1, "L": 1, "C": 3, "S": 2, "Q": 2, "T": 1, "Z": 0}

Matrix = tuple[float, float, float, float, float, float]  # SVG's matrix(a,b,c,d,e,f)


def _fmt(v: float) -> str:
    s = f"{v:.3f}".rstrip("0").rstrip(".")
    return "0" if s in ("", "-0") else s


def parse_transform(text: str | None) -> Matrix | None:
    """The matrix of a transform attribute (Qt writes only `matrix(...)`; `translate` and
    `scale` are read too). None for none; ValueError for anything else."""
    if not text or not text.strip():
        return None
    m = re.fullmatch(r"\s*(matrix|translate|scale)\s*\(([^)]*)\)\s*", text)
    if not m:
        raise ValueError(f"unsupported SVG transform {text!r}")
    kind, nums = m.group(1), [float(v) for v in _NUMBER.findall(m.group(2))]
    if kind == "matrix" and len(nums) == 6:
        return tuple(nums)  # type: ignore[return-value]
    if kind == "translate" and len(nums) in (1, 2):
        return (1.0, 0.0, 0.0, 1.0, nums[0], nums[1] if len(nums) == 2 else 0.0)
    if kind == "scale" and len(nums) in (1, 2):
        return (nums[0], 0.0, 0.0, nums[-1], 0.0, 0.0)
    raise ValueError(f"unsupported SVG transform {text!r}")


def _apply(mx: Matrix, x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = mx
    return a * x + c * y + e, b * x + d * y + f


def _map_pairs(mx: Matrix, nums: list[float]) -> str:
    out = []
    for i in range(0, len(nums) - 1, 2):
        x, y = _apply(mx, nums[i], nums[i + 1])
        out.append(f"{_fmt(x)},{_fmt(y)}")
    return " ".join(out)


def map_path(d: str, mx: Matrix) -> str:
    """Path data with every point mapped through `mx` (exact: affine maps keep lines and
    Béziers). Only absolute commands are accepted, which is what Qt writes."""
    out: list[str] = []
    cmd: str | None = None
    nums: list[float] = []

    def flush():
        if cmd is None:
            if nums:
                raise ValueError("path data starts with a number")
            return
        per = _PAIRS[cmd] * 2
        if per == 0:
            if nums:
                raise ValueError("numbers after Z in path data")
            out.append("Z")
            return
        if not nums or len(nums) % per:
            raise ValueError(f"path command {cmd} with {len(nums)} numbers")
        for i in range(0, len(nums), per):
            out.append(cmd + _map_pairs(mx, nums[i : i + per]))

    for token in _PATH_TOKEN.findall(d):
        if token.isalpha():
            flush()
            cmd, nums = token.upper() if token in "zZ" else token, []
            if cmd not in _PAIRS:
                raise ValueError(f"unsupported path command {token!r} (only absolute M L C S Q T Z)")
        else:
            nums.append(float(token))
    flush()
    return " ".join(out)


def _num(el: ET.Element, name: str, default: float = 0.0) -> float:
    value = el.get(name)
    if value is None:
        return default
    m = _NUMBER.match(value.strip())
    if not m:
        raise ValueError(f"<{el.tag}> {name}={value!r} is not a number")
    return float(m.group(0))


def _ellipse_path(cx: float, cy: float, rx: float, ry: float) -> str:
    kx, ky = rx * _KAPPA, ry * _KAPPA
    return (
        f"M{cx + rx},{cy} C{cx + rx},{cy + ky} {cx + kx},{cy + ry} {cx},{cy + ry} "
        f"C{cx - kx},{cy + ry} {cx - rx},{cy + ky} {cx - rx},{cy} "
        f"C{cx - rx},{cy - ky} {cx - kx},{cy - ry} {cx},{cy - ry} "
        f"C{cx + kx},{cy - ry} {cx + rx},{cy - ky} {cx + rx},{cy} Z"
    )


_GEOMETRY = ("d", "points", "x", "y", "width", "height", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry")


def map_shape(el: ET.Element, mx: Matrix) -> None:
    """Map one shape element's geometry through `mx`, in place. Rects, ellipses and
    circles become paths (a transformed rectangle need not be axis-aligned)."""
    tag = el.tag[len(_SVG) :] if el.tag.startswith(_SVG) else el.tag
    if tag == "path":
        el.set("d", map_path(el.get("d", ""), mx))
        return
    if tag in ("polyline", "polygon"):
        el.set("points", _map_pairs(mx, [float(v) for v in _NUMBER.findall(el.get("points", ""))]))
        return
    if tag == "line":
        (x1, y1), (x2, y2) = (
            _apply(mx, _num(el, "x1"), _num(el, "y1")),
            _apply(mx, _num(el, "x2"), _num(el, "y2")),
        )
        el.set("x1", _fmt(x1))
        el.set("y1", _fmt(y1))
        el.set("x2", _fmt(x2))
        el.set("y2", _fmt(y2))
        return
    if tag == "rect":
        if el.get("rx") or el.get("ry"):
            raise ValueError("rounded <rect> under a scaling transform is not supported")
        x, y, w, h = _num(el, "x"), _num(el, "y"), _num(el, "width"), _num(el, "height")
        d = f"M{x},{y} L{x + w},{y} L{x + w},{y + h} L{x},{y + h} Z"
    elif tag == "ellipse":
        d = _ellipse_path(_num(el, "cx"), _num(el, "cy"), _num(el, "rx"), _num(el, "ry"))
    elif tag == "circle":
        r = _num(el, "r")
        d = _ellipse_path(_num(el, "cx"), _num(el, "cy"), r, r)
    else:
        raise ValueError(f"<{tag}> with vector-effect under a scaling transform is not supported")
    for name in _GEOMETRY:
        el.attrib.pop(name, None)
    el.tag = _SVG + "path"
    el.set("d", map_path(d, mx))


def _is_translation(mx: Matrix) -> bool:
    a, b, c, d, _e, _f = mx
    return a == 1 and b == 0 and c == 0 and d == 1


def _plain_group(parent: ET.Element, index: int, group: ET.Element) -> int:
    """Rewrite one <g> (child `index` of `parent`); returns how many elements now stand in
    its place."""
    marked = [child for child in group if child.get(VECTOR_EFFECT) is not None]
    if not marked:
        return 1
    mx = parse_transform(group.get("transform"))
    for child in marked:
        del child.attrib[VECTOR_EFFECT]
    if mx is None or _is_translation(mx):
        return 1
    if any(
        "url(" in (group.get(k) or "") + (child.get(k) or "") for k in ("fill", "stroke") for child in marked
    ):
        raise ValueError("a gradient or pattern paint under a scaling transform is not supported")
    # split the group into runs: shapes to map go to a copy without the transform
    runs: list[tuple[bool, list[ET.Element]]] = []
    for child in list(group):
        flat = any(child is m for m in marked)
        if runs and runs[-1][0] == flat:
            runs[-1][1].append(child)
        else:
            runs.append((flat, [child]))
    attrs = dict(group.attrib)
    flat_attrs = {k: v for k, v in attrs.items() if k != "transform"}
    parent.remove(group)
    for offset, (flat, children) in enumerate(runs):
        new = ET.Element(group.tag, flat_attrs if flat else attrs)
        new.text, new.tail = group.text, group.tail
        for child in children:
            if flat:
                map_shape(child, mx)
            new.append(child)
        parent.insert(index + offset, new)
    return len(runs)


def _walk(parent: ET.Element) -> None:
    i = 0
    while i < len(parent):
        child = parent[i]
        if child.tag == _SVG + "g":
            if child.get("transform") is None:
                _walk(child)
            elif any(g.get("transform") for g in child.iter(_SVG + "g") if g is not child):
                raise ValueError("nested transformed groups are not supported")
            i += _plain_group(parent, i, child)
        else:
            if child.get(VECTOR_EFFECT) is not None:
                del child.attrib[VECTOR_EFFECT]  # no transform between it and the root
            i += 1


def plain_svg(data: bytes) -> bytes:
    """Qt's SVG bytes as plain SVG 1.1 (see the module's docstring)."""
    ET.register_namespace("", SVG_NS)
    ET.register_namespace("xlink", XLINK_NS)
    root = ET.fromstring(data)
    if root.tag != _SVG + "svg":
        raise ValueError("not an SVG document")
    if any(el.get("transform") for el in root if el.tag != _SVG + "g"):
        raise ValueError("unexpected transform outside a group")
    _walk(root)
    for el in root.iter():
        if el.get(VECTOR_EFFECT) is not None:  # inside groups _walk does not split
            raise ValueError(f"<{el.tag}> keeps vector-effect")
    root.set("version", "1.1")
    root.attrib.pop("baseProfile", None)
    body = ET.tostring(root, encoding="unicode")
    return ('<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n' + body + "\n").encode("utf-8")
