#!/usr/bin/env python3
"""Fits time per step against element count for the rod scaling benches.

Reads criterion's estimates of `cargo bench --bench rod -- rod_scaling` from
target/criterion/rod_scaling_<discretization>/step/<elements>/new/estimates.json
(median, ns) and prints, per discretization, the medians and the least-squares slope
of log(time) against log(elements): the fitted exponent (1 = linear cost).

Usage: python3 benches/fit_rod_scaling.py [criterion directory]
"""
import json
import math
import os
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join("target", "criterion")
found = False
for disc in ["rigid_chain", "linear", "quadratic", "cubic"]:
    base = os.path.join(root, f"rod_scaling_{disc}", "step")
    if not os.path.isdir(base):
        continue
    points = []
    for entry in os.listdir(base):
        path = os.path.join(base, entry, "new", "estimates.json")
        if entry.isdigit() and os.path.exists(path):
            with open(path) as f:
                median_ns = json.load(f)["median"]["point_estimate"]
            points.append((int(entry), median_ns))
    if len(points) < 2:
        continue
    found = True
    points.sort()
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    table = ", ".join(f"{n}: {t / 1e3:.1f} µs ({t / n:.0f} ns/element)" for n, t in points)
    print(f"{disc}: exponent {slope:.3f}  [{table}]")
if not found:
    sys.exit(f"no rod_scaling estimates under {root}: run cargo bench --bench rod -- rod_scaling")
