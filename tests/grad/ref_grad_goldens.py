#!/usr/bin/env python3
"""Writes tests/golden/grad/ops/ref_*.relay: gradient values from an independent reference.

Each golden is a small @main `sum(op(inputs) * c)` run with `relayc --grad --run`, so the
printed gradient of every input is the operator's vector-Jacobian product with the cotangent c.
The expected values here come from the definitions of the operators written out as plain
loops over indices (spec/ops.md), not from relayc's rules nor from any formula they use:
a matmul by its sum over k, take/gather_nd by the element each output reads, adaptive max
pooling by scanning each cell for its first maximum, a grouped strided convolution by its
sum over taps. Inputs are small integers (halves for the pool) and cotangents positive, so
every value is exact in float64 and the printed text is unambiguous. Input arrays are written
to tests/golden/grad/data/ref_*.npy. Run from the repository root after changing a case;
the outputs are committed, and the goldens pin the values.

    python3 tests/grad/ref_grad_goldens.py
"""
import itertools
import os
import sys

try:
    import numpy as np
except ImportError:
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    raise

OUT = "tests/golden/grad/ops"
DATA = "tests/golden/grad/data"


def num(v, dtype):
    if dtype.startswith("int"):
        return str(int(v)) + ("i64" if dtype == "int64" else "")
    f = float(v)
    s = str(int(f)) if f == int(f) else repr(f)
    return s + ("f" if dtype == "float32" else "f64")


def fmt(a, dtype, indent=0):
    a = np.asarray(a)
    if a.ndim == 0:
        return num(a, dtype)
    if a.ndim == 1:
        return "[" + ", ".join(num(v, dtype) for v in a) + "]"
    sep = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(fmt(sub, dtype, indent + 1) for sub in a) + "]"


def T(shape, dtype):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    return f"Tensor[({dims}), {dtype}]"


def golden(name, comment, params, body, value, grads, rdtype="float64"):
    """params: [(name, array, dtype)]; grads: one array per parameter (ints: zeros);
    rdtype: the dtype of the (scalar) result."""
    runs = "// RUN: relayc --grad --run %s" + "".join(f" --input {p}=%d/../data/{name}_{p}.npy" for p, _, _ in params)
    text = "(" + num(value, rdtype) + ", (" + ", ".join(fmt(g, d) for g, (_, _, d) in zip(grads, params)) + \
        ("," if len(params) == 1 else "") + "))"
    lines = [f"// {c}" for c in comment.strip().split("\n")]
    lines.append(runs)
    lines += ["// OUT: " + ln if ln else "// OUT:" for ln in text.split("\n")]
    sig = ", ".join(f"%{p}: {T(a.shape, d)}" for p, a, d in params)
    lines += ['#[version = "0.0.5"]', f"def @main({sig}) -> {rdtype} {{", "  " + body.strip().replace("\n", "\n  "), "}"]
    with open(os.path.join(OUT, f"{name}.relay"), "w") as f:
        f.write("\n".join(lines) + "\n")
    for p, a, d in params:
        np.save(os.path.join(DATA, f"{name}_{p}.npy"), np.asarray(a, dtype=d))


def ints(rng, shape, lo=-2, hi=2):
    return rng.integers(lo, hi + 1, size=shape).astype("float64")


def pos(rng, shape):
    return rng.integers(1, 4, size=shape).astype("float64")


rng = np.random.default_rng(12)

# ---- nn.matmul with N-D data: out[i, m, n] = sum_k A(i)[m, k] B[k, n] -------------------------
# a3 (2, 2, 3) with transpose_a: A(i)[m, k] = a3[i, k, m]; b (2, 2) with transpose_b: B[k, n] = b[n, k]
a3, b, c1 = ints(rng, (2, 2, 3)), ints(rng, (2, 2)), pos(rng, (2, 3, 2))
v, b2, c2 = ints(rng, (3,)), ints(rng, (3, 2)), pos(rng, (2,))  # rank-1 data: out[n] = sum_k v[k] b2[k, n]
val = 0.0
da3, db, dv, db2 = np.zeros_like(a3), np.zeros_like(b), np.zeros_like(v), np.zeros_like(b2)
out1 = np.zeros((2, 3, 2))
for i, m, n, k in itertools.product(range(2), range(3), range(2), range(2)):
    out1[i, m, n] += a3[i, k, m] * b[n, k]
    da3[i, k, m] += c1[i, m, n] * b[n, k]
    db[n, k] += c1[i, m, n] * a3[i, k, m]
out2 = np.zeros(2)
for n, k in itertools.product(range(2), range(3)):
    out2[n] += v[k] * b2[k, n]
    dv[k] += c2[n] * b2[k, n]
    db2[k, n] += c2[n] * v[k]
val = (out1 * c1).sum() + (out2 * c2).sum()
golden("ref_matmul_nd", """
nn.matmul with rank-3 data (transpose_a swaps its last two axes, transpose_b) and rank-1 data;
expected values from tests/grad/ref_grad_goldens.py (the sum over k written as loops).""",
       [("a", a3, "float64"), ("b", b, "float64"), ("c1", c1, "float64"), ("v", v, "float64"),
        ("b2", b2, "float64"), ("c2", c2, "float64")],
       """
%0 = nn.matmul(%a, %b, transpose_a=True, transpose_b=True);
%1 = nn.matmul(%v, %b2);
add(sum(multiply(%0, %c1)), sum(multiply(%1, %c2)))""",
       val, [da3, db, out1, dv, db2, out2])

# ---- take with batch_dims=1 (clip mode, duplicates) and gather_nd with batch_dims=1 ----------
x, c3 = ints(rng, (2, 4, 2)), pos(rng, (2, 3, 2))
idx = np.array([[1, 1, 5], [-1, 2, 0]])  # clip: 5 -> 3, -1 -> 0
y, c4 = ints(rng, (2, 3, 2)), pos(rng, (2, 2, 2))
ind = np.array([[[2, 0], [1, 1]]])  # (1, b=2, y=2): out[b, y, :] = y[b, ind[0, b, y], :]
dx, dy = np.zeros_like(x), np.zeros_like(y)
out3, out4 = np.zeros((2, 3, 2)), np.zeros((2, 2, 2))
for bb, i, p in itertools.product(range(2), range(3), range(2)):
    j = min(max(idx[bb, i], 0), 3)
    out3[bb, i, p] = x[bb, j, p]
    dx[bb, j, p] += c3[bb, i, p]
for bb, q, p in itertools.product(range(2), range(2), range(2)):
    j = ind[0, bb, q]
    out4[bb, q, p] = y[bb, j, p]
    dy[bb, j, p] += c4[bb, q, p]
val = (out3 * c3).sum() + (out4 * c4).sum()
golden("ref_take_gather_nd_batch_dims", """
take(axis=1, batch_dims=1, mode="clip") with duplicate and out-of-range indices, and
gather_nd(batch_dims=1): each batch reads its own rows, gradients add up at repeated indices;
expected values from tests/grad/ref_grad_goldens.py (each output's source element, as loops).""",
       [("x", x, "float64"), ("i", idx, "int32"), ("c3", c3, "float64"), ("y", y, "float64"),
        ("j", ind, "int64"), ("c4", c4, "float64")],
       """
%0 = take(%x, %i, axis=1, batch_dims=1, mode="clip");
%1 = gather_nd(%y, %j, batch_dims=1);
add(sum(multiply(%0, %c3)), sum(multiply(%1, %c4)))""",
       val, [dx, np.zeros_like(idx), out3, dy, np.zeros_like(ind), out4])

# ---- adaptive max pooling with unequal cells: cell o of n over L is [floor(o L/n), ceil((o+1) L/n)) --
def cells(L, n):
    return [(o * L // n, -(-(o + 1) * L // n)) for o in range(n)]


xp = (rng.permutation(30).reshape(1, 2, 5, 3) / 2.0 - 7.0)
cp = pos(rng, (1, 2, 3, 2))
xq = (rng.permutation(14).reshape(1, 2, 7) / 2.0 - 3.0)
cq = pos(rng, (1, 2, 3))
dxp, outp = np.zeros_like(xp), np.zeros((1, 2, 3, 2))
for ch in range(2):
    for (oh, (h0, h1)), (ow, (w0, w1)) in itertools.product(enumerate(cells(5, 3)), enumerate(cells(3, 2))):
        best, at = None, None
        for h, w in itertools.product(range(h0, h1), range(w0, w1)):  # row-major, first maximum wins
            if best is None or xp[0, ch, h, w] > best:
                best, at = xp[0, ch, h, w], (h, w)
        outp[0, ch, oh, ow] = best
        dxp[0, ch, at[0], at[1]] += cp[0, ch, oh, ow]
dxq, outq = np.zeros_like(xq), np.zeros((1, 2, 3))
for ch in range(2):
    for o, (s0, s1) in enumerate(cells(7, 3)):
        at = s0 + int(np.argmax(xq[0, ch, s0:s1]))
        outq[0, ch, o] = xq[0, ch, at]
        dxq[0, ch, at] += cq[0, ch, o]
val = (outp * cp).sum() + (outq * cq).sum()
golden("ref_adaptive_max_pool_unequal", """
nn.adaptive_max_pool2d (5 x 3 -> 3 x 2) and nn.adaptive_max_pool1d (7 -> 3) with unequal,
overlapping cells: each cell's g goes to its first maximum (positions in two cells can receive
twice); expected values from tests/grad/ref_grad_goldens.py (every cell scanned as a loop).""",
       [("x", xp, "float64"), ("c", cp, "float64"), ("z", xq, "float64"), ("d", cq, "float64")],
       """
%0 = nn.adaptive_max_pool2d(%x, output_size=[3, 2]);
%1 = nn.adaptive_max_pool1d(%z, output_size=[3]);
add(sum(multiply(%0, %c)), sum(multiply(%1, %d)))""",
       val, [dxp, outp, dxq, outq])

# ---- conv2d with groups=2 and strides=[2, 2], padding 1 ---------------------------------------
xc, wc = ints(rng, (1, 4, 5, 5)), ints(rng, (4, 2, 3, 3))
cc = pos(rng, (1, 4, 3, 3))
dxc, dwc, outc = np.zeros_like(xc), np.zeros_like(wc), np.zeros((1, 4, 3, 3))
for o, yy, xx, i, r, s in itertools.product(range(4), range(3), range(3), range(2), range(3), range(3)):
    g = o // 2  # group of output channel o: inputs 2g, 2g + 1
    h, w = yy * 2 - 1 + r, xx * 2 - 1 + s
    if 0 <= h < 5 and 0 <= w < 5:
        outc[0, o, yy, xx] += xc[0, 2 * g + i, h, w] * wc[o, i, r, s]
        dxc[0, 2 * g + i, h, w] += cc[0, o, yy, xx] * wc[o, i, r, s]
        dwc[o, i, r, s] += cc[0, o, yy, xx] * xc[0, 2 * g + i, h, w]
golden("ref_conv2d_groups_strides", """
nn.conv2d with groups=2 and strides=[2, 2] together (padding 1): data and weight gradients;
expected values from tests/grad/ref_grad_goldens.py (the sum over taps as loops).""",
       [("x", xc, "float64"), ("w", wc, "float64"), ("c", cc, "float64")],
       """
%0 = nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1], groups=2);
sum(multiply(%0, %c))""",
       (outc * cc).sum(), [dxc, dwc, outc])

# ---- relayc's fused convolutions (float32 only): the ReLU's kink passes g at z = 0 -------------
xf = ints(rng, (1, 2, 4, 4), -1, 1)
wf = ints(rng, (2, 2, 3, 3), -1, 1)
bf = np.array([0.0, 1.0])
rf = ints(rng, (1, 2, 2, 2), -1, 1)
cf = pos(rng, (1, 2, 2, 2))
zf = np.zeros((1, 2, 2, 2))
for o, yy, xx, i, r, s_ in itertools.product(range(2), range(2), range(2), range(2), range(3), range(3)):
    zf[0, o, yy, xx] += xf[0, i, yy + r, xx + s_] * wf[o, i, r, s_]
zb = zf + bf[None, :, None, None] + rf
gz = np.where(zb < 0, 0.0, cf)  # nn.relu's convention: z = 0 passes g
dxf, dwf = np.zeros_like(xf), np.zeros_like(wf)
for o, yy, xx, i, r, s_ in itertools.product(range(2), range(2), range(2), range(2), range(3), range(3)):
    dxf[0, i, yy + r, xx + s_] += gz[0, o, yy, xx] * wf[o, i, r, s_]
    dwf[o, i, r, s_] += gz[0, o, yy, xx] * xf[0, i, yy + r, xx + s_]
assert (zb == 0).any() and (zb < 0).any()
golden("ref_fused_conv_relu", """
relayc.conv2d_bias_add with relu=True (float32; FuseConvEpilogue's kernel): the ReLU mask is
taken on the recomputed pre-activation, so positions where it is exactly 0 pass g (nn.relu's
rule); bias gets g summed per channel, the residual g. Expected values from
tests/grad/ref_grad_goldens.py (the convolution as loops).""",
       [("x", xf, "float32"), ("w", wf, "float32"), ("b", bf, "float32"), ("r", rf, "float32"), ("c", cf, "float32")],
       """
%0 = relayc.conv2d_bias_add(%x, %w, %b, %r, relu=True);
sum(multiply(%0, %c))""",
       (np.maximum(zb, 0) * cf).sum(), [dxf, dwf, gz.sum(axis=(0, 2, 3)), gz, np.maximum(zb, 0)], "float32")

# batch_norm_relu: y = γ (x − μ) r + β, r = 1/√(v + ε) with ε = 0 so r is exact
xb = np.array([[[1.0, 0.0], [2.0, -1.0]], [[0.0, 3.0], [-2.0, 1.0]]]).reshape(2, 2, 2)  # (N=2, C=2, W=2)
gam, bet, mu, var = np.array([2.0, -1.0]), np.array([0.0, 1.0]), np.array([1.0, 0.0]), np.array([0.25, 4.0])
cb = pos(rng, (2, 2, 2))
rr = 1 / np.sqrt(var)
zb2 = gam[None, :, None] * (xb - mu[None, :, None]) * rr[None, :, None] + bet[None, :, None]
assert (zb2 == 0).any() and (zb2 < 0).any()
g0 = np.where(zb2 < 0, 0.0, cb)
dxb = g0 * (gam * rr)[None, :, None]
dgam = (g0 * (xb - mu[None, :, None]) * rr[None, :, None]).sum(axis=(0, 2))
dbet = g0.sum(axis=(0, 2))
dmu = -(g0.sum(axis=(0, 2))) * gam * rr
dvar = -0.5 * (g0 * (xb - mu[None, :, None])).sum(axis=(0, 2)) * gam * rr ** 3
golden("ref_batch_norm_relu", """
relayc.batch_norm_relu (float32, epsilon 0 so 1/sqrt(var) is exact): the ReLU mask on the
recomputed nn.batch_norm output (exactly 0 passes g), then the batch_norm rule for data, gamma,
beta and the moving statistics; expected values from tests/grad/ref_grad_goldens.py.""",
       [("x", xb, "float32"), ("g", gam, "float32"), ("b", bet, "float32"), ("m", mu, "float32"), ("v", var, "float32"),
        ("c", cb, "float32")],
       """
%0 = relayc.batch_norm_relu(%x, %g, %b, %m, %v, epsilon=0f);
sum(multiply(%0.0, %c))""",
       (np.maximum(zb2, 0) * cb).sum(), [dxb, dgam, dbet, dmu, dvar, np.maximum(zb2, 0)], "float32")

# ---- scatters with ties and duplicates, applied in order -----------------------------------
ds = np.array([[1.0, 2.0, 3.0], [2.0, 0.5, 1.0]])
# scatter_elements(axis=1, max): line 0 gets u at cols [0, 0, 2], line 1 at [1, 1, 1]
ie = np.array([[0, 0, 2], [1, 1, 1]])
ue = np.array([[1.0, 4.0, 3.0], [2.0, 0.5, 2.0]])  # ties: u == d (3 at [0, 2]), u == u (2, 2 at [1, 1])
ce = pos(rng, (2, 3))
oute, dde, due = ds.copy(), np.zeros_like(ds), np.zeros_like(ue)
winner = {}
for row in range(2):
    for col in range(3):
        winner[(row, col)] = ("d", None)
    for k in range(3):  # in order along the line: acc = acc > u ? acc : u (a tie goes to u)
        q = (row, ie[row, k])
        if not oute[q] > ue[row, k]:
            oute[q] = ue[row, k]
            winner[q] = ("u", k)
for (row, col), (who, k) in winner.items():
    if who == "d":
        dde[row, col] += ce[row, col]
    else:
        due[row, k] += ce[row, col]
# scatter_nd(mode="update") with duplicate rows: the last write wins
dn = ints(rng, (3, 2))
inn = np.array([[2, 0, 2]])
un = ints(rng, (3, 2))
cn = pos(rng, (3, 2))
outn, ddn, dun = dn.copy(), cn.copy(), np.zeros_like(un)
last = {}
for k in range(3):
    outn[inn[0, k]] = un[k]
    last[inn[0, k]] = k
for row, k in last.items():
    ddn[row] = 0
    dun[k] = cn[row]
# scatter_elements(mean): acc = (acc + u) / 2 in order
dm = np.array([[1.0, 2.0, 4.0]])
im = np.array([[2, 0, 2, 2]])
um = np.array([[2.0, 4.0, 6.0, 8.0]])
cm = pos(rng, (1, 3))
outm, ddm, dum = dm.copy(), cm.copy(), np.zeros_like(um)
for k in range(4):
    q = im[0, k]
    outm[0, q] = (outm[0, q] + um[0, k]) / 2
    ddm[0, q] /= 2  # each later combination halves what came before
for k in range(4):
    later = sum(1 for j in range(k + 1, 4) if im[0, j] == im[0, k])
    dum[0, k] = cm[0, im[0, k]] / 2 ** (1 + later)
val = (oute * ce).sum() + (outn * cn).sum() + (outm * cm).sum()
golden("ref_scatter_ties", """
scatter_elements max with ties (an update equal to the data, two equal updates: the kernel's
acc > u ? acc : u hands a tie to the later one), scatter_nd "update" with duplicate rows (the
last write wins, the overwritten data and updates get nothing), scatter_elements "mean"
((acc + u)/2 in order); expected values from tests/grad/ref_grad_goldens.py (sequential loops).""",
       [("d", ds, "float64"), ("i", ie, "int32"), ("u", ue, "float64"), ("c", ce, "float64"),
        ("dn", dn, "float64"), ("j", inn, "int64"), ("un", un, "float64"), ("cn", cn, "float64"),
        ("dm", dm, "float64"), ("k", im, "int32"), ("um", um, "float64"), ("cm", cm, "float64")],
       """
%0 = scatter_elements(%d, %i, %u, axis=1, reduction="max");
%1 = scatter_nd(%dn, %j, %un);
%2 = scatter_elements(%dm, %k, %um, axis=1, reduction="mean");
add(add(sum(multiply(%0, %c)), sum(multiply(%1, %cn))), sum(multiply(%2, %cm)))""",
       val, [dde, np.zeros_like(ie), due, oute, ddn, np.zeros_like(inn), dun, outn, ddm, np.zeros_like(im), dum, outm])

# ---- sparse_to_dense: default everywhere, then rows in order (a later duplicate wins) --------
isd = np.array([[0, 1], [2, 0], [0, 1], [3, 3]])  # row 3 is outside (3, 2): matches nothing
vsd, dsd = ints(rng, (4,)), np.array(0.5)
csd = pos(rng, (3, 2))
outsd = np.full((3, 2), 0.5)
who = -np.ones((3, 2), dtype=int)
for k in range(4):
    a, b_ = isd[k]
    if a < 3 and b_ < 2:
        outsd[a, b_] = vsd[k]
        who[a, b_] = k
dvsd = np.array([csd[who == k].sum() for k in range(4)])
ddsd = csd[who == -1].sum()
golden("ref_sparse_to_dense", """
sparse_to_dense with a duplicate index row (the later row wins, the earlier gets nothing) and a
row outside the output: values get g at the positions they won, the default the rest; expected
values from tests/grad/ref_grad_goldens.py.""",
       [("i", isd, "int32"), ("v", vsd, "float64"), ("d", dsd, "float64"), ("c", csd, "float64")],
       """
%0 = sparse_to_dense(%i, %v, %d, output_shape=[3, 2]);
sum(multiply(%0, %c))""",
       (outsd * csd).sum(), [np.zeros_like(isd), dvsd, ddsd, outsd])

# ---- nn.upsampling3d, nearest with integer scales: each input gets its block's sum ----------
xu = ints(rng, (1, 1, 2, 2, 2))
cu = pos(rng, (1, 1, 4, 2, 4))
outu = xu.repeat(2, axis=2).repeat(2, axis=4)
dxu = np.zeros_like(xu)
for d_, h, w in itertools.product(range(4), range(2), range(4)):
    dxu[0, 0, d_ // 2, h, w // 2] += cu[0, 0, d_, h, w]
golden("ref_upsampling3d", """
nn.upsampling3d nearest with scales (2, 1, 2), asymmetric coordinates (source index floor(o/s)):
each input element receives the sum of its 2 x 1 x 2 block of g; expected values from tests/grad/ref_grad_goldens.py.""",
       [("x", xu, "float64"), ("c", cu, "float64")],
       """
%0 = nn.upsampling3d(%x, scale_d=2f, scale_h=1f, scale_w=2f, coordinate_transformation_mode="asymmetric");
sum(multiply(%0, %c))""",
       (outu * cu).sum(), [dxu, outu])
