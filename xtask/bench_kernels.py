"""NumPy's side of `cargo xtask bench-kernels`: the best time of one
operation for each case of cann-sim's `kernels` benchmark, one thread
(OPENBLAS_NUM_THREADS=1 and its siblings, set before NumPy loads).

Usage: bench_kernels.py [SECONDS_PER_CASE]. Prints one JSON object per
case, {"case": NAME, "seconds": BEST}, then {"blas": ...}: the BLAS NumPy
was built with.
"""

import json
import os
import sys
import time

for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import numpy as np  # noqa: E402 (after the thread limits)


def best_time(f, budget):
    best, start, runs = float("inf"), time.perf_counter(), 0
    while runs < 3 or time.perf_counter() - start < budget:
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
        runs += 1
    return best


def blas_name():
    try:
        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        return f'{blas.get("name", "?")} {blas.get("version", "")}'.strip()
    except Exception as e:  # older NumPy: no dict mode
        return f"unknown ({e})"


def main():
    budget = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    rng = np.random.default_rng(0)
    n = 512
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    c = np.empty((n, n), np.float32)
    cases = [("matmul_f32_512", lambda: np.matmul(a, b, out=c))]
    x = rng.uniform(-1, 1, 1 << 20).astype(np.float32)
    y = rng.uniform(-1, 1, 1 << 20).astype(np.float32)
    z = np.empty_like(x)
    cases += [
        ("add_f32_1m", lambda: np.add(x, y, out=z)),
        ("mul_f32_1m", lambda: np.multiply(x, y, out=z)),
        ("relu_f32_1m", lambda: np.maximum(x, np.float32(0), out=z)),
    ]
    for name, f in cases:
        print(json.dumps({"case": name, "seconds": best_time(f, budget)}), flush=True)
    print(json.dumps({"blas": blas_name(), "numpy": np.__version__}), flush=True)


if __name__ == "__main__":
    main()
