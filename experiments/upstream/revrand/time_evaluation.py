#!/usr/bin/env python3
"""Times one revrand marginal-likelihood evaluation (value and gradient), process CPU.

The function timed is the one scipy's L-BFGS-B calls inside revrand's
StandardLinearModel.fit: StandardLinearModel._elbo (the negative ELBO, which with a
full posterior covariance is the exact negative log marginal likelihood, and its
gradient in the noise variance, the weight variance(s) and the basis parameters),
wrapped by revrand's own structured_minimizer and logtrick_minimizer (flat vector,
positive parameters in log space). It is captured by standing in for
scipy.optimize.minimize at the call, then called on the starting point. Bases as the
harness's driver.py builds them (build_basis: FastFoodRBF for rbf and ard, a sum of
Q FastFoodGM for gm) on synthetic inputs x ~ N(0, I) (n x d), y = sin(x_0) + noise.
Our code only: it imports revrand from the extracted, patched source (PYTHONPATH).

    PYTHONPATH=<root> VENV/bin/python time_evaluation.py --method ard --n 278 --d 6 \
        --m 256 [--components 5] [--repeats 5] [--seconds 1.0] [--seed 1] [--out t.json]

Prints one line per repeat and a summary; --out writes the summary as JSON. Each
repeat calls the objective `inner` times (chosen so that a repeat takes about
--seconds of CPU) after one warm-up call; the per-evaluation time of a repeat is its
process CPU time (time.process_time) over `inner`; the summary gives the median,
min and max over the repeats. One BLAS thread unless OPENBLAS_NUM_THREADS is set.
"""

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

warnings.filterwarnings("ignore", category=SyntaxWarning)

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver import build_basis  # noqa: E402  (the harness's own basis construction)


class Captured(Exception):
    """Raised by the stand-in for scipy.optimize.minimize once it holds the objective."""


def objective(method, n, d, m, components, seed):
    """The flat objective revrand's fit hands to L-BFGS-B, its starting point, the
    number of features D and the inputs' shapes."""
    import revrand.slm as slm
    from revrand import StandardLinearModel

    rng = np.random.RandomState(seed)
    x = rng.standard_normal((n, d))
    y = np.sin(x[:, 0]) + 0.1 * rng.standard_normal(n)
    rngs = [np.random.RandomState(seed + 1 + q) for q in range(components + 1)]
    basis = build_basis(method, m, components, d, rngs[1:])
    held = {}

    def stand_in(fun, x0, jac=True, bounds=None, args=(), **kwargs):
        held.update(fun=fun, x0=np.array(x0, dtype=float), args=tuple(args))
        raise Captured

    saved = slm.minimize
    slm.minimize = stand_in  # looked up by StandardLinearModel.fit at call time
    try:
        # nstarts = 0: no random-start evaluations; the start is one draw from revrand's
        # priors (Gamma(1) variances and lengthscales, N(0, 1) GM means).
        model = StandardLinearModel(basis, maxiter=1, nstarts=0, random_state=rngs[0])
        model.fit(x, y)
        raise RuntimeError("StandardLinearModel.fit did not call minimize")
    except Captured:
        pass
    finally:
        slm.minimize = saved
    features = int(basis.get_dim(x))
    fun, x0, args = held["fun"], held["x0"], held["args"]
    return (lambda: fun(x0, *args)), x0.size, features


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--method", required=True, choices=("rbf", "ard", "gm"))
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--d", type=int, required=True)
    ap.add_argument("--m", type=int, required=True,
                    help="frequencies (RBF/ARD: D = 2m; GM: ceil(m/2Q) per component, "
                         "rounded up to a multiple of the padded dimension, D = 4 x that x Q)")
    ap.add_argument("--components", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=1.0,
                    help="CPU seconds per repeat (sets the calls per repeat)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out")
    a = ap.parse_args()

    fun, n_params, features = objective(a.method, a.n, a.d, a.m, a.components, a.seed)
    t0 = time.process_time()
    value, grad = fun()  # warm-up
    first = time.process_time() - t0
    if not (np.isfinite(value) and np.all(np.isfinite(grad))):
        sys.exit("time_evaluation.py: the objective is not finite at the start")
    inner = max(1, int(math.ceil(a.seconds / max(first, 1e-6))))
    per = []
    for r in range(a.repeats):
        t0 = time.process_time()
        for _ in range(inner):
            fun()
        per.append((time.process_time() - t0) / inner)
        print(f"repeat {r}: {per[-1]:.6g} s per evaluation ({inner} calls)", flush=True)
    summary = {
        "code": "revrand",
        "method": a.method,
        "n": a.n,
        "d": a.d,
        "m": a.m,
        "components": a.components if a.method == "gm" else None,
        "n_features": features,
        "n_params": int(n_params),
        "objective": float(value),
        "inner": inner,
        "per_evaluation_seconds": per,
        "median_seconds": statistics.median(per),
        "min_seconds": min(per),
        "max_seconds": max(per),
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
        "numpy": np.__version__,
    }
    print(f"revrand {a.method} n={a.n} d={a.d} m={a.m} D={features} params={n_params}: "
          f"median {summary['median_seconds']:.6g} s per evaluation "
          f"(min {summary['min_seconds']:.6g}, max {summary['max_seconds']:.6g}, "
          f"{a.repeats} repeats x {inner} calls)")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
