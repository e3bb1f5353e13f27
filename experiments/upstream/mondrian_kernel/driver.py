"""Runs the Mondrian-kernel authors' scripts (matejbalog/mondrian-kernel, patched for Python 3)
on the harness's data and writes their numbers as JSON.

    python driver.py --task kernel_error|width_selection --train train.csv [--test test.csv]
                     --params params.json --seed S --out out.json

Run with the working directory (or PYTHONPATH) = the patched upstream root. This file is our
own code: it only reads the CSV files, seeds numpy's global RNG, calls the upstream functions
and reshapes what they return. See NOTES.md for the parameters and the output columns.
"""
import argparse
import contextlib
import json
import math
import os
import sys
import types

sys.dont_write_bytecode = True  # write nothing into the upstream root (no __pycache__)

# The upstream times itself with process CPU time; keep BLAS on one thread so that is the
# method's own work (as the harness's single-threaded cells). An explicit setting wins.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import random  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

# --- matplotlib stand-in --------------------------------------------------------------------
# utils.py and the experiment scripts import matplotlib, and experiment_1's
# run_and_plot_experiment_convergence hands its results only to ax.errorbar. A do-nothing
# stand-in keeps the run headless (no matplotlib needed) and records the errorbar calls.
_ERRORBARS = []


class _Sink(object):
    """Accepts any attribute, call or index and does nothing, except ax.errorbar."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name == "errorbar":
            return _record_errorbar
        return _Sink()

    def __call__(self, *args, **kwargs):
        return _Sink()

    def __getitem__(self, key):
        return _Sink()


def _record_errorbar(x, y, *args, **kwargs):
    _ERRORBARS.append({
        "label": kwargs.get("label"),
        "x": [float(v) for v in x],
        "y": [float(v) for v in y],
        "yerr": [float(v) for v in kwargs.get("yerr", [])],
    })
    return _Sink()


def _install_matplotlib_stub():
    mpl = types.ModuleType("matplotlib")
    mpl.__getattr__ = lambda name: _Sink()
    pylab = types.ModuleType("matplotlib.pylab")
    pylab.__getattr__ = lambda name: _Sink()
    mpl.pylab = pylab
    mpl.pyplot = pylab
    sys.modules["matplotlib"] = mpl
    sys.modules["matplotlib.pylab"] = pylab
    sys.modules["matplotlib.pyplot"] = pylab


class DriverError(Exception):
    pass


class Refused(DriverError):
    """A parameter this driver does not know: the harness and the driver disagree (a bug of
    the project). Exit status 3, which the harness takes as a failure of the cell, not as an
    upstream that cannot run it."""


# --- input ----------------------------------------------------------------------------------
def read_csv(path):
    """x0..x{d-1},y with a header line -> (X (n x d), y (n))."""
    with open(path) as f:
        header = f.readline().strip().split(",")
    d = len(header) - 1
    if d < 1 or header != ["x%d" % j for j in range(d)] + ["y"]:
        raise DriverError("%s: header must be x0,...,x{d-1},y, got %s" % (path, ",".join(header)))
    data = np.loadtxt(path, delimiter=",", skiprows=1, dtype=float, ndmin=2)
    if data.size == 0:
        data = np.empty((0, d + 1))
    if data.shape[1] != d + 1:
        raise DriverError("%s: %d columns, header has %d" % (path, data.shape[1], d + 1))
    return np.ascontiguousarray(data[:, :d]), np.ascontiguousarray(data[:, d])


def seed_all(seed):
    random.seed(seed)
    np.random.seed(seed % (2 ** 32))  # numpy's global RandomState takes 32 bits


def take(params, known):
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise Refused("unknown parameters: %s" % ", ".join(unknown))
    return {k: params.get(k, v) for k, v in known.items()}


def finite(v):
    v = float(v)
    return v if math.isfinite(v) else None


# --- task kernel_error (experiment_1, Fig. 5) ------------------------------------------------
METHOD_OF_LABEL = {
    "Fourier features": "random_fourier",
    "random binning": "random_binning",
    "Mondrian kernel": "mondrian",
}
ALL_METHODS = ["random_fourier", "random_binning", "mondrian"]


def task_kernel_error(args, params):
    p = take(params, {"method": "all", "lifetime": 10.0, "max_nonzeros": 50, "sweeps": 1})
    methods = p["method"]
    if methods == "all":
        methods = ALL_METHODS
    elif isinstance(methods, str):
        methods = [methods]
    for m in methods:
        if m not in ALL_METHODS:
            raise DriverError("method %r: one of %s or 'all'" % (m, ", ".join(ALL_METHODS)))
    lifetime = float(p["lifetime"])
    m_max = int(p["max_nonzeros"])
    sweeps = int(p["sweeps"])
    if m_max < 2 or m_max % 2:
        raise DriverError("max_nonzeros must be even and >= 2 (the script gives Fourier "
                          "features max_nonzeros/2 frequencies and plots them at 1, 3, ...)")
    if sweeps < 1:
        raise DriverError("sweeps must be >= 1")
    X, _ = read_csv(args.train)

    import experiment_1_laplace_kernel_approximation as exp1

    seed_all(args.seed)
    t0 = time.process_time()
    # One call draws random binning, then the Mondrian kernel, then Fourier features (in that
    # order, from numpy's global RNG), `sweeps` fresh draws each, evaluating nested prefixes.
    with contextlib.redirect_stdout(open(os.devnull, "w")):
        exp1.run_and_plot_experiment_convergence(X, lifetime, m_max, sweeps)
    fit_seconds = time.process_time() - t0

    rows = []
    for bar in _ERRORBARS:
        method = METHOD_OF_LABEL.get(bar["label"])
        if method is None or method not in methods:
            continue
        if len(bar["x"]) != len(bar["y"]):
            raise DriverError("%s: %d x positions for %d errors" % (method, len(bar["x"]), len(bar["y"])))
        for k, (x, err) in enumerate(zip(bar["x"], bar["y"])):
            order = k + 1
            row = {
                "method": method,
                "order": order,
                "nonzeros": 2 * order if method == "random_fourier" else order,
                "m_axis": int(x),
                "max_abs_error": finite(err),
                "sweeps": sweeps,
            }
            if sweeps > 1:
                row["max_abs_error_sd"] = finite(bar["yerr"][k])
            rows.append(row)
    if not rows:
        raise DriverError("the script produced no errors for %s" % ", ".join(methods))
    return rows, fit_seconds


# --- task width_selection (experiment_2, Fig. 8) ---------------------------------------------
WIDTH_PARAMS = {
    "method": None,
    "n_features": 350,
    "delta": 1e-4,
    "learner": "sgd",
    "epochs": 10,
    "evaluations": {"random_fourier": 101, "random_binning": 51},
    "search_threshold": 20.0,
    "terminal_lifetime": 1e-6,
    "checkpoints": None,
    "selection": "test",
    "holdout_rows": 819,
    # our ridge learner's settings: meaningless for the upstream (SGD only), accepted and unused
    "cg_tolerance": None,
    "cg_max_iterations": None,
    "dense_below": None,
}


def checkpoint_lifetimes(cp, terminal, event_times):
    """The harness's checkpoint grid (sweep.rs Checkpoints::lifetimes), plus every event time
    with every_split."""
    first, count = float(cp["first"]), int(cp["count"])
    include = [float(v) for v in cp.get("include", [])]
    if count == 1:
        out = [terminal]
    else:
        a, b = math.log(first), math.log(terminal)
        last = count - 1
        out = [first if k == 0 else terminal if k == last else math.exp(a + (b - a) * k / last)
               for k in range(count)]
    out += [v for v in include if v <= terminal]
    out.sort()
    merged = []
    for v in out:
        if merged and abs(v - merged[-1]) <= 1e-9 * abs(v):
            if v in include:
                merged[-1] = v
        else:
            merged.append(v)
    if cp.get("every_split"):
        merged = sorted(set(merged) | set(event_times))
    return merged


def task_width_selection(args, params):
    p = take(params, WIDTH_PARAMS)
    method = p["method"]
    if method not in ("mondrian", "random_fourier", "random_binning"):
        raise DriverError("method must be mondrian, random_fourier or random_binning")
    if p["learner"] != "sgd":
        raise DriverError("learner %r: the upstream has only its SGD learner (learner = \"sgd\")" % p["learner"])
    if method != "mondrian" and int(p["epochs"]) != 10:
        raise DriverError("epochs = %s: the upstream's evaluations always run 10 SGD epochs" % p["epochs"])
    if method != "mondrian" and float(p["search_threshold"]) != 20.0:
        raise DriverError("search_threshold = %s: the upstream's select_width has 20.0 built in" % p["search_threshold"])
    if p["selection"] not in ("test", "holdout"):
        raise DriverError("selection must be test or holdout")
    M = int(p["n_features"])
    delta = float(p["delta"])

    X, y = read_csv(args.train)
    if args.test is None:
        raise DriverError("width_selection needs --test")
    X_test, y_test = read_csv(args.test)
    if X_test.shape[1] != X.shape[1]:
        raise DriverError("train has %d inputs, test %d" % (X.shape[1], X_test.shape[1]))

    seed_all(args.seed)
    devnull = open(os.devnull, "w")
    rows = []
    if method == "mondrian":
        from mondrian_kernel import evaluate_all_lifetimes

        terminal = float(p["terminal_lifetime"])
        validation = p["selection"] == "holdout"
        if validation:
            # The script's own validation split: evaluate_all_lifetimes(validation=True) scores
            # the first N_test//2 rows of its test set as validation, the rest as test. We hand
            # it [last holdout_rows training rows; test rows], which is that split exactly when
            # holdout_rows == (holdout_rows + n_test) // 2 (e.g. 819 and CPU's 819 test rows).
            h = int(p["holdout_rows"])
            if not 0 < h < X.shape[0] or (h + X_test.shape[0]) // 2 != h:
                raise DriverError("selection = holdout needs holdout_rows = n_test (or n_test - 1)"
                                  " for the script's halving; got %d and %d" % (h, X_test.shape[0]))
            X, X_test = X[:-h], np.r_[X[-h:], X_test]
            y, y_test = y[:-h], np.r_[y[-h:], y_test]
        t0 = time.process_time()
        with contextlib.redirect_stdout(devnull):
            res = evaluate_all_lifetimes(X, y, X_test, y_test, M, terminal, delta,
                                         validation=validation, mondrian_kernel=True)
        fit_seconds = time.process_time() - t0
        times = res["times"]
        if p["checkpoints"] is None:
            lifetimes = list(times)  # every split event
        else:
            lifetimes = checkpoint_lifetimes(p["checkpoints"], terminal, times)
        i = -1
        for k, lifetime in enumerate(lifetimes):
            while i + 1 < len(times) and times[i + 1] <= lifetime:
                i += 1
            if i < 0:
                continue  # no split yet: the script records nothing before its first event
            row = {
                "curve": "mondrian",
                "evaluation": k,
                "lifetime": lifetime,
                "lg": math.log2(lifetime),
                "events": i + 1,
                "event_lifetime": times[i],
                "error": finite(res["kernel_test"][i]),
                "train_error": finite(res["kernel_train"][i]),
                "cpu_seconds": res["runtimes"][i],
            }
            if validation:
                row["holdout_error"] = finite(res["kernel_validation"][i])
            row["selection_error"] = row["holdout_error"] if validation else row["error"]
            rows.append(row)
    else:
        if p["selection"] != "test":
            raise DriverError("selection = holdout: the script's select_width for random "
                              "features scores one set only (the test set); use selection = test")
        from utils import select_width
        if method == "random_fourier":
            from experiment_2_fast_kernel_width_learning import evaluate_fourier_features as evaluate
        else:
            from random_binning import evaluate_random_binning as evaluate
        evaluations = p["evaluations"]
        n_eval = int(evaluations[method] if isinstance(evaluations, dict) else evaluations)
        if n_eval < 1:
            raise DriverError("evaluations must be >= 1")
        seen = []

        def recorded(X_, y_, X_test_, y_test_, M_, lifetime, delta_):
            seen.append(float(lifetime))  # select_width returns errors and times, not widths
            return evaluate(X_, y_, X_test_, y_test_, M_, lifetime, delta_)

        t0 = time.process_time()
        with contextlib.redirect_stdout(devnull):
            runtimes, errors = select_width(X, y, X_test, y_test, M, delta, recorded, n_eval - 1)
        fit_seconds = time.process_time() - t0
        for k, (lifetime, err, cpu) in enumerate(zip(seen, errors, runtimes)):
            rows.append({
                "curve": method,
                "evaluation": k,
                "lifetime": lifetime,
                "lg": math.log2(lifetime),
                "error": finite(err),
                "selection_error": finite(err),
                "cpu_seconds": cpu,
            })
    return rows, fit_seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--task", required=True, choices=["kernel_error", "width_selection"])
    ap.add_argument("--train", required=True)
    ap.add_argument("--test")
    ap.add_argument("--params", required=True)
    ap.add_argument("--seed", required=True, type=int)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.seed < 0:
        raise DriverError("--seed must be a u64")
    with open(args.params) as f:
        params = json.load(f)
    if not isinstance(params, dict):
        raise DriverError("params.json must hold a JSON object")
    _install_matplotlib_stub()
    # The upstream modules: PYTHONPATH should name the patched root; the cwd is the fallback.
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    task = task_kernel_error if args.task == "kernel_error" else task_width_selection
    rows, fit_seconds = task(args, params)
    with open(args.out, "w") as f:
        json.dump({"rows": rows, "fit_seconds": fit_seconds, "predict_seconds": 0.0}, f,
                  allow_nan=False)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # one line on stderr, nonzero exit (3: the parameters refused)
        msg = str(e).replace("\n", " ")
        sys.stderr.write("driver: %s: %s\n" % (type(e).__name__, msg))
        sys.exit(3 if isinstance(e, Refused) else 1)
