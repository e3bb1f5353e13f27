"""Runs the authors' StreaMRAK (and their LP-KRR baseline, MRFALKON) on one experiment cell.

Our own glue, not upstream code: it imports the upstream's modules (the harness runs it with the
working directory = the patched upstream root, on PYTHONPATH) and does what the authors'
Experiments/VarSinus_StreaMRAK_experiment.py and VarSinus_MRFALKON_experiment.py do, but with
the cell's rows (streamed in file order) instead of the files under Experiments/Datasets.

    python driver.py --task streamrak|lp_krr --train train.csv --test test.csv \
                     --params params.json --seed <u64> --out out.json

See NOTES.md for the parameters, the output rows and the measured costs.
"""

import argparse
import contextlib
import json
import math
import os
import random
import shutil
import sys
import tempfile
import time
import warnings

# The upstream writes SQLite files and logs into the working directory (moved to a temporary
# folder below); keep it from writing __pycache__ into the source tree too.
sys.dont_write_bytecode = True
# dampedCoverTree.py compares with `is 'Occupied'` (a SyntaxWarning on every compile).
warnings.filterwarnings("ignore", category=SyntaxWarning)
# Its conflict probability 1/(1+exp(-h tan(.))) overflows exp near d = 0 (harmless: gives 0).
warnings.filterwarnings("ignore", message="overflow encountered in exp")

import numpy as np  # noqa: E402

# Parameter names (ours, as in configs/streamrak/*.toml) -> (upstream config dict, key).
# Defaults are the authors' VarSinus files: StreaMRAKconfig/*_varsin and *_mrfalkon.
STREAMRAK_KEYS = {
    "delta0": ("monitor_conf", "lmNodeRatioFactor"),
    "high_rate": ("monitor_conf", "highRate_PTlevel"),
    "low_rate": ("monitor_conf", "lowRate_PTlevel"),
    "d_level": ("monitor_conf", "thr_PTlevel"),
    "k_threshold": ("streaMRAKmainConfig", "conv_KnmTKnm_thr"),
    "z_threshold": ("streaMRAKmainConfig", "conv_Zm_thr"),
    "track_length": ("streaMRAKmainConfig", "track_length_conv_est"),
    "interval": ("streaMRAKmainConfig", "interval_length_conv_est"),
    "lower_limit": ("streaMRAKmainConfig", "lowlim_ntrp"),
    "upper_limit": ("streaMRAKmainConfig", "uplim_ntrp_factor"),
    "lambda": ("falkon_conf", "reg_param"),
    "cg_iterations": ("falkon_conf", "conj_grad_max_iter"),
}
LP_KRR_KEYS = {
    "interval": ("MRFALKONmainConfig", "interval_length_conv_est"),
    "points_per_level": ("MRFALKONmainConfig", "lowlim_ntrp"),
    "lp_landmark_factor": ("MRFALKONmainConfig", "lmNodeRatioFactor"),
    "lambda": ("falkon_conf", "reg_param"),
    "cg_iterations": ("falkon_conf", "conj_grad_max_iter"),
}
# Keys of our cells that do not apply to the upstream (accepted, ignored).
IGNORED = {
    "method", "falkon_bandwidth", "falkon_landmarks", "falkon_solver", "falkon_search",
    "trace_points", "target_steps", "pair_states", "rollout_steps", "paths",
}
# Keys the driver reads itself (the cover tree's radius and depth, the stream's batches).
OWN_KEYS = {"r0", "max_level", "batches"}
PREDICT_CHUNK = 10000  # test rows per prediction call (the authors predict in 10 batches)


class Fail(Exception):
    pass


class Refused(Fail):
    """A parameter this driver does not know: the harness and the driver disagree (a bug of
    the project). Exit status 3, which the harness takes as a failure of the cell, not as an
    upstream that cannot run it."""


def read_csv(path):
    with open(path) as fh:
        header = fh.readline().strip().split(",")
    if len(header) < 2 or header[-1] != "y":
        raise Fail(f"{path}: header must be x0,...,x{{d-1}},y; got {','.join(header)}")
    data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2, dtype=float)
    if data.shape[1] != len(header):
        raise Fail(f"{path}: {data.shape[1]} columns, header has {len(header)}")
    return np.ascontiguousarray(data[:, :-1]), np.ascontiguousarray(data[:, -1:])


def seed_all(seed):
    # Python's and numpy's global generators are the only ones the upstream uses
    # (random.shuffle of child order; np.random.choice / randint for draws).
    random.seed(seed)
    np.random.seed([seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF])


def batches(x, y, count):
    from StreaMRAK.StreaMRAKmain import DataLoader2

    count = max(1, min(int(count), len(x)))
    return DataLoader2(np.array_split(x, count), np.array_split(y, count))


def apply(config_obj, keys, params):
    for name, (attr, key) in keys.items():
        if name in params:
            getattr(config_obj, attr)[key] = float(params[name])


def quantile(v, q):
    return float(np.quantile(v, q)) if len(v) else None


def num(v):
    v = float(v)
    return v if math.isfinite(v) else None


def mse_per_level(model, parts, x, y):
    """Test MSE of the model of levels 0..L for every fitted level L.

    parts: per fitted level (shallowest first) the (landmarks, coefficients, bandwidth) the
    upstream's predict uses; each level's term is the upstream's predict_at_scale, summed
    cumulatively (the upstream's predict(max_lvl=L) recomputes levels 0..L for every L). The
    sum over all levels is checked against the upstream's own predict on the first chunk.
    """
    solver = model.falkon_solver
    sums = np.zeros(len(parts))
    for start in range(0, len(x), PREDICT_CHUNK):
        xc, yc = x[start:start + PREDICT_CHUNK], y[start:start + PREDICT_CHUNK]
        pred = np.zeros_like(yc)
        for k, (lm, coef, scale) in enumerate(parts):
            pred = pred + solver.predict_at_scale(xc, lm, coef, scale)
            sums[k] += float(np.sum((yc - pred) ** 2))
        if start == 0:
            ref = model.predict(xc)
            if not np.allclose(pred, ref, rtol=1e-9, atol=1e-12, equal_nan=True):
                raise Fail("cumulative level predictions differ from the upstream's predict")
    return sums / (len(x) * y.shape[1])


def run_streamrak(params, xtr, ytr, xts, yts):
    from StreaMRAK.StreaMRAKmain import StreaMRAKconfig, StreaMRAKmaster

    config = StreaMRAKconfig(0, tag="_varsin")
    apply(config, STREAMRAK_KEYS, params)
    r0 = float(params.get("r0", 1.0))
    loader = batches(xtr, ytr, params.get("batches", 200))
    # As the authors' script: the root is the first streamed point (which is streamed too).
    model = StreaMRAKmaster(xtr[0], ytr[0], r0, (), config, "VarSinus_StreaMRAK")

    # Record when each level becomes landmark-ready and is fitted (bookkeeping only).
    info = {}
    orig_select, orig_fit = model.extract_and_set_lm, model.multiResModel.fit_at_lvl

    def select(lvl):
        info.setdefault(lvl, {})["ready_after"] = model.sampleCounter
        info[lvl]["nodes"] = int(model.monitorScaleCover.n_nodes_at_lvl[lvl])
        out = orig_select(lvl)
        # (the upstream's own summary is reset for levels staged at the end of the stream)
        info[lvl]["candidates"] = int(model.summary[f"lvl{lvl}"]["NumLandmarks"])
        return out

    def fit(lvl, n_tr):
        t = time.perf_counter()
        out = orig_fit(lvl, n_tr)
        info.setdefault(lvl, {})["solve_seconds"] = time.perf_counter() - t
        info[lvl]["fitted_after"] = model.sampleCounter
        return out

    model.extract_and_set_lm, model.multiResModel.fit_at_lvl = select, fit

    t0, c0 = time.perf_counter(), time.process_time()
    model.learnFromStream(dataLoader=loader, ExpName="VarSinus_StreaMRAK", logg=False)
    fit_s, fit_cpu = time.perf_counter() - t0, time.process_time() - c0

    levels = list(model.multiResModel.list_of_fitted_levels)
    if not levels:
        raise Fail("StreaMRAK fitted no level (stream too short for the thresholds)")
    t1 = time.perf_counter()
    parts = []
    for lvl in levels:
        lm, scale = model.dataLoggerLM.select_lm_and_scale_at_level(lvl)
        parts.append((lm, model.dataLoggerCoef.select_coef_at_level(lvl), scale))
    mses = mse_per_level(model, parts, xts, yts)
    pred_s = time.perf_counter() - t1

    rows, cum = [], 0
    for k, lvl in enumerate(levels):
        lm, scale = model.dataLoggerLM.select_lm_and_scale_at_level(lvl)
        s, i = model.summary[f"lvl{lvl}"], info.get(lvl, {})
        cum += len(lm)
        rows.append({
            "record": "level", "level": lvl, "bandwidth": float(scale),
            "landmarks": int(len(lm)), "cumulative_landmarks": cum,
            "candidates": i.get("candidates"), "nodes": i.get("nodes"),
            "rows": int(s["NumTrPoints"]), "ready_after": i.get("ready_after"),
            "fitted_after": i.get("fitted_after"),
            "fitted_seconds": float(s["TimeUntilLvlReady"]),
            "solve_seconds": i.get("solve_seconds"), "mse": num(mses[k]),
            "landmark_x1_median": quantile(lm[:, 0], 0.5) if len(lm) else None,
            "landmark_x1_q90": quantile(lm[:, 0], 0.9) if len(lm) else None,
        })
    extra = {
        "tree_nodes": int(np.sum(model.monitorScaleCover.n_nodes_at_lvl)),
        "occupied": int(model.dampCoverTree.num_occupied),
    }
    return rows, fit_s, fit_cpu, pred_s, extra


def run_lp_krr(params, xtr, ytr, xts, yts):
    from MRFALKON.MRFALKONmain import MRFALKON_Master, MRFALKONconfig

    config = MRFALKONconfig(0, tag="_mrfalkon")
    apply(config, LP_KRR_KEYS, params)
    main = config.MRFALKONmainConfig
    if main["interval_length_conv_est"] >= main["lowlim_ntrp"]:
        raise Fail(
            f"interval ({main['interval_length_conv_est']:g}) must be below points_per_level "
            f"({main['lowlim_ntrp']:g}): MRFALKON would fit a level it never updated (NaN)")
    r0 = float(params.get("r0", 1.0))
    max_level = int(params.get("max_level", 20))  # the authors' maxLvl for VarSinus
    # As the authors' script: m = int(factor * sqrt(n)) landmarks drawn with replacement from
    # the (already shuffled) training rows, before streaming.
    n = len(xtr)
    m = max(1, int(main["lmNodeRatioFactor"] * np.sqrt(n)))
    landmarks = xtr[np.random.randint(0, n, size=m)].reshape(m, -1)
    loader = batches(xtr, ytr, params.get("batches", 200))
    model = MRFALKON_Master(r0, landmarks, config, "VarSinus_MRFALKON")

    info = {}
    orig_fit = model.multiResModel.fit_at_lvl

    def fit(lvl, n_tr):
        t = time.perf_counter()
        out = orig_fit(lvl, n_tr)
        info[lvl] = {"solve_seconds": time.perf_counter() - t,
                     "fitted_after": model.sampleCounter}
        return out

    model.multiResModel.fit_at_lvl = fit

    t0, c0 = time.perf_counter(), time.process_time()
    model.learnFromStream(dataLoader=loader, ExpName="VarSinus_MRFALKON", logg=False,
                          maxLvl=max_level)
    fit_s, fit_cpu = time.perf_counter() - t0, time.process_time() - c0

    levels = list(model.multiResModel.list_of_fitted_levels)
    if not levels:
        raise Fail(f"LP-KRR fitted no level ({n} rows, points_per_level {main['lowlim_ntrp']:g})")
    t1 = time.perf_counter()
    parts = [(model.lm, model.dataLoggerCoef.select_coef_at_level(lvl), r0 / 2 ** lvl)
             for lvl in levels]
    mses = mse_per_level(model, parts, xts, yts)
    pred_s = time.perf_counter() - t1

    rows = []
    for k, lvl in enumerate(levels):
        s, i = model.summary[f"lvl{lvl}"], info.get(lvl, {})
        rows.append({
            "record": "level", "level": lvl, "bandwidth": r0 / 2 ** lvl,
            "landmarks": m, "cumulative_landmarks": m * (k + 1),
            "rows": int(s["NumTrPoints"]), "fitted_after": i.get("fitted_after"),
            "fitted_seconds": float(s["TimeUntilLvlReady"]),
            "solve_seconds": i.get("solve_seconds"), "mse": num(mses[k]),
            "landmark_x1_median": quantile(landmarks[:, 0], 0.5),
            "landmark_x1_q90": quantile(landmarks[:, 0], 0.9),
        })
    return rows, fit_s, fit_cpu, pred_s, {"stream_points_used": int(model.sampleCounter)}


def summary(rows, n, fit_s, fit_cpu, pred_s, extra):
    mses = [r["mse"] for r in rows]
    finite = [v for v in mses if v is not None]
    first, last = mses[0], mses[-1]
    out = {
        "record": "summary", "levels_fitted": len(rows), "deepest_level": rows[-1]["level"],
        "mse_first": first, "mse_deepest": last, "mse_best": min(finite) if finite else None,
        "mse_ratio_deepest_to_first":
            last / first if first not in (None, 0.0) and last is not None else None,
        "deepest_x1_q90": rows[-1]["landmark_x1_q90"],
        "total_landmarks": rows[-1]["cumulative_landmarks"], "stream_points": n,
        "train_seconds": fit_s, "train_cpu_seconds": fit_cpu,
        "points_per_second": n / fit_cpu if fit_cpu > 0 else None, "eval_seconds": pred_s,
    }
    out.update(extra)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", required=True, choices=["streamrak", "lp_krr"])
    ap.add_argument("--train", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--params", required=True)
    ap.add_argument("--seed", required=True, type=int)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    with open(a.params) as fh:
        params = json.load(fh)
    if not isinstance(params, dict):
        raise Fail("params.json must hold a JSON object")
    known = set(STREAMRAK_KEYS) | set(LP_KRR_KEYS) | IGNORED | OWN_KEYS
    unknown = sorted(set(params) - known)
    if unknown:
        raise Refused(f"unknown parameters {unknown}")
    if not isinstance(params.get("r0", 1.0), (int, float)):
        raise Fail("r0 must be a number (an absolute radius)")

    xtr, ytr = read_csv(a.train)
    xts, yts = read_csv(a.test)
    if xtr.shape[1] != xts.shape[1]:
        raise Fail("train and test have different numbers of columns")
    if len(xtr) < 2 or len(xts) < 1:
        raise Fail("need at least 2 training rows and 1 test row")

    out_path = os.path.abspath(a.out)
    seed_all(a.seed)
    # The upstream writes Databases/, LoggModel/ and LvlFillingLogg/ into the working
    # directory (and refuses to start if its SQLite file exists): give it a fresh one.
    work = tempfile.mkdtemp(prefix="streamrak-work-", dir=os.path.dirname(out_path))
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        os.chdir(work)
        run = run_streamrak if a.task == "streamrak" else run_lp_krr
        with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
            rows, fit_s, fit_cpu, pred_s, extra = run(params, xtr, ytr, xts, yts)
    finally:
        os.chdir(cwd)
        shutil.rmtree(work, ignore_errors=True)
    rows.append(summary(rows, len(xtr), fit_s, fit_cpu, pred_s, extra))
    with open(out_path, "w") as fh:
        json.dump({"rows": rows, "fit_seconds": fit_s, "predict_seconds": pred_s}, fh,
                  indent=1, allow_nan=False)


if __name__ == "__main__":
    try:
        main()
    except Fail as e:
        print(f"driver.py: {e}", file=sys.stderr)
        sys.exit(3 if isinstance(e, Refused) else 1)
    except Exception as e:  # one line, as the harness expects
        print(f"driver.py: {type(e).__name__}: {e}".replace("\n", " "), file=sys.stderr)
        sys.exit(1)
