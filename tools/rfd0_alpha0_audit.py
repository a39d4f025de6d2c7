"""Audit of RFD0-SON's alpha = 0 phase against the RFD paper (Luo et al., JMLR 2019: Alg. 3, Alg. 6, App. A) on farm-ads.

RFD0-SON (alpha0 = 0) fails its farm-ads rows (tools/rfd0_slab.py, tools/rfd0_blowup.py). This
script runs the dense reference kernel (``_kernels/son.py``) on the rfd-table2 splits (seed 0, 70/30) with
each reading of the alpha = 0 phase that the paper's text leaves open, and measures the blow-up:

* ``default``    streamlearn's reading: App. A with the H-seminorm minimiser w2* (zero H-cost), next slab,
                 rows with a zero gradient are not appended to the buffer (lazy kernel = this, to rounding);
* ``printed_w2`` App. A's w2 exactly as printed, ``x - V S^-2 V^T x``: the dense kernel recompiled here with
                 this candidate direction in the pseudo-inverse phase (``_printed_w2_kernel``);
* ``zero_rows``  Alg. 6 lines 6-7 literally: every example appends its row ``sqrt(mu + eta_t) g`` even when
                 g = 0 (a clipped score equal to the label), so the 2m-row buffer fills, and the alpha = 0
                 phase ends, on the paper's iteration count (driver-level emulation, one example per call).

For each run: test accuracy, the first example with alpha > 0, the largest |w| before it, and at the
largest single step of the alpha = 0 phase the step's norm and ``sigma_new / sigma_max`` (the singular value
of B along the new gradient direction over the largest one: a numerical-rank cut-off would have to exceed it
to change the step).

    python tools/rfd0_alpha0_audit.py [--ells 20,30,50] [--splits 5] [--variants default,printed_w2,zero_rows]

Writes tools/results/rfd0_alpha0_audit[TAG].json and .md.
"""

import argparse
import functools
import json
import types
from contextlib import nullcontext
from pathlib import Path
from unittest import mock

import numba
import numpy as np

from streamlearn._kernels import son as _son

RESULTS = Path(__file__).resolve().parent / "results"
PAPER = {20: 87.69, 30: 88.82, 50: 88.90}


def _recompiled(dispatcher, **swap):
    """``dispatcher``'s Python code compiled again with the module globals in ``swap`` replaced.

    The copy gets its own qualified name: numba names machine code after the module, the qualified name and a
    per-process counter, so a copy named like the original could take the symbol of the original loaded from
    numba's disk cache (or the other way round) and run the wrong code."""
    py = dispatcher.py_func
    g = dict(py.__globals__, **swap)
    fn = types.FunctionType(py.__code__, g, py.__name__, py.__defaults__, py.__closure__)
    fn.__qualname__ = f"{py.__qualname__}_printed_w2"
    return numba.njit(nogil=True)(fn)


@numba.njit(nogil=True)
def _never_pinv(gram, sc, r, alpha):
    return False


@numba.njit(nogil=True)
def _gram_matrix(gram, sc, r, alpha):
    """``G = B B^T`` whatever alpha (App. A's w2 has no alpha)."""
    return _son._small_matrix(gram, sc, r, 0.0)


@numba.njit(nogil=True)
def _squared_pinv_solve(m, rhs, pinv):
    """``(G^+)^2 Bx`` in both slots of ``_small_solve``'s answer."""
    z2, _ = _son._small_solve(m, rhs, np.bool_(True))
    return z2, z2


@functools.cache
def _printed_w2_kernel():
    """``son_epoch`` with App. A's w2 as printed, ``x - B^T G^{+2} B x`` (G = B B^T), as its candidate direction in
    the pseudo-inverse phase (alpha negligible, not ``in_span``); nothing else differs.

    The candidate step is the kernel's own ``_son_project`` (direction ``x - B^T c``, den ``x.`` of it,
    ``_project_along``), compiled again with ``c = (G^+)^2 Bx`` in place of ``(G + alpha I)^{-1} Bx``; outside
    that phase the kernel's projection runs unchanged."""
    printed = _recompiled(
        _son._son_project, _use_pinv=_never_pinv, _small_matrix=_gram_matrix, _small_solve=_squared_pinv_solve
    )

    def project(wk, bk, gk, sk, r, al, x, tau, xx, in_span, dirv):
        if in_span or not _son._use_pinv(gk, sk, r, al):
            _son._son_project(wk=wk, bk=bk, gk=gk, sk=sk, r=r, al=al, x=x, tau=tau, xx=xx, in_span=in_span, dirv=dirv)
        else:
            printed(wk=wk, bk=bk, gk=gk, sk=sk, r=r, al=al, x=x, tau=tau, xx=xx, in_span=in_span, dirv=dirv)

    return _recompiled(_son.son_epoch, _son_project=numba.njit(nogil=True)(project))


def _run(Xtr, ytr, Xte, yte, ell, variant):
    from streamlearn._kernels.fd import fd_shrink
    from streamlearn.second_order import SketchedOnlineNewton

    est = SketchedOnlineNewton(sketch="rfd", ell=ell, alpha0=0.0)
    est._lazy_kernel = False
    est._allocate(Xtr.shape[1], 1, Xtr)
    est.t_ = 0
    cap, keep, d = 2 * ell, ell - 1, Xtr.shape[1]
    work = np.empty((cap, d))
    mu = est._mu()
    first_alpha, w_max, big = None, 0.0, {"step_norm": 0.0}
    # the estimator's own dense pass (son_epoch with its arguments), with the printed-w2 kernel swapped in
    swap = mock.patch.object(_son, "son_epoch", _printed_w2_kernel()) if variant == "printed_w2" else nullcontext()
    with swap:
        for i in range(Xtr.shape[0]):
            xi = Xtr[i : i + 1]
            tg = np.array([[float(ytr[i])]])
            out = np.empty((1, 1))
            w_before = est.coef_[0].copy()
            t, bad = est._dense_pass(xi, tg, np.ones(1), out, keep, keep)
            est.t_ = int(t)
            if bad >= 0:
                return {"diverged_at": i}
            dl = 2.0 * (out[0, 0] - ytr[i])
            if variant == "zero_rows" and dl == 0.0:  # Alg. 6 line 6: the zero row still enters the buffer
                r = int(est._state_n_rows[0])
                est._state_buf[0, r] = 0.0
                est._state_gram[0, r, :] = 0.0
                est._state_gram[0, :, r] = 0.0
                r += 1
                if r == cap:
                    r, delta = fd_shrink(est._state_buf[0], est._state_gram[0], r, keep, keep, work)
                    _son._clear_unused(est._state_buf[0], est._state_gram[0], r)
                    est._state_alpha[0] += 0.5 * delta
                est._state_n_rows[0] = r
            alpha = float(est._state_alpha[0])
            if first_alpha is None:
                if alpha > 0.0:
                    first_alpha = i
                else:
                    w_max = max(w_max, float(np.linalg.norm(est.coef_[0])))
                    step = float(np.linalg.norm(est.coef_[0] - w_before))
                    if step > big["step_norm"] and dl != 0.0:
                        r = int(est._state_n_rows[0])
                        s = np.sqrt(np.maximum(np.linalg.eigvalsh(est._state_gram[0, :r, :r]), 0.0))
                        x = xi.toarray().ravel()
                        B = est._state_buf[0, :r]
                        q, _ = np.linalg.qr(B[: r - 1].T) if r > 1 else (np.zeros((d, 0)), None)
                        gp = x - q @ (q.T @ x)  # the gradient's component off the earlier rows (g = dl x)
                        big = {
                            "example": i,
                            "step_norm": step,
                            "score": float(out[0, 0]),
                            "label": int(ytr[i]),
                            "sigma_new_over_max": float(np.sqrt(mu + 1.0 / t) * abs(dl) * np.linalg.norm(gp) / s.max()),
                        }
    acc = 100.0 * float(np.mean(np.where(np.clip(Xte @ est.coef_[0], -1, 1) >= 0, 1, -1) == yte))
    return {
        "test_accuracy": acc,
        "first_alpha_positive_example": first_alpha,
        "w_norm_max_alpha0": w_max,
        "largest_alpha0_step": big,
        "final_alpha": float(est._state_alpha[0]),
    }


def main():
    from threadpoolctl import threadpool_limits

    from streamlearn.datasets import load_farm_ads
    from streamlearn.experiments.rfd_table2 import split_indices

    ap = argparse.ArgumentParser()
    ap.add_argument("--ells", default="20,30,50")
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--variants", default="default,printed_w2,zero_rows")
    ap.add_argument("--tag", default="", help="suffix of the output files (parallel runs)")
    args = ap.parse_args()
    threadpool_limits(1)
    X, y = load_farm_ads()
    y = np.where(y > 0, 1, -1)
    n = X.shape[0]
    n_train = int(round(0.7 * n))
    rows = []
    for ell in [int(v) for v in args.ells.split(",")]:
        for variant in args.variants.split(","):
            runs = []
            for split in range(args.splits):
                tr, te = split_indices(n, split)
                runs.append(_run(X[tr], y[tr], X[te], y[te], ell, variant))
            accs = [r.get("test_accuracy", float("nan")) for r in runs]
            rows.append(
                {
                    "ell": ell,
                    "variant": variant,
                    "runs": runs,
                    "mean": float(np.mean(accs)),
                    "std": float(np.std(accs)),
                    "paper": PAPER.get(ell),
                }
            )
            print(json.dumps({k: v for k, v in rows[-1].items() if k != "runs"}), flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"rfd0_alpha0_audit{args.tag}.json").write_text(json.dumps(rows, indent=1))
    lines = [
        "# RFD0-SON's alpha = 0 phase: readings of the RFD paper's App. A / Alg. 6 on farm-ads (dense kernel)",
        "",
        f"Command: `python tools/rfd0_alpha0_audit.py --ells {args.ells} --splits {args.splits} "
        f"--variants {args.variants}{' --tag ' + args.tag if args.tag else ''}` "
        f"(rfd-table2 splits, seeds 0..{args.splits - 1}, n_train={n_train}).",
        "",
        "| m | variant | test acc % (mean ± std) | per split | first example with alpha > 0 | max |w| while "
        "alpha = 0 | largest alpha = 0 step (norm; sigma_new/sigma_max) | paper % |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ok = [x for x in r["runs"] if "test_accuracy" in x]
        accs = ", ".join(f"{x['test_accuracy']:.2f}" for x in ok)
        firsts = ", ".join(str(x["first_alpha_positive_example"]) for x in ok)
        wmax = ", ".join(f"{x['w_norm_max_alpha0']:.1f}" for x in ok)
        steps = ", ".join(
            f"{x['largest_alpha0_step']['step_norm']:.1f}; "
            f"{x['largest_alpha0_step'].get('sigma_new_over_max', 0.0):.1e}"
            for x in ok
        )
        lines.append(
            f"| {r['ell']} | {r['variant']} | {r['mean']:.2f} ± {r['std']:.2f} | {accs} | {firsts} | "
            f"{wmax} | {steps} | {r['paper']} |"
        )
    (RESULTS / f"rfd0_alpha0_audit{args.tag}.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
