#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise a zerosleep benchmark run.

    bench/report.py RESULTS.CSV OUTDIR

Reads the merged CSV of bench/bench.sh (kernels "vanilla", "seed" and
"zerosleep"), prints a summary table and every target of the benchmark with
its measured value and PASS or FAIL, and writes into OUTDIR:

    summary.md    the same tables in Markdown, for the README
    latency.dat   the data of the plot
    latency.gp    the gnuplot script that draws latency.png

Exit status: 0 when every target passed, 1 when one failed, 2 on bad input.
"""

import csv
import os
import sys

BIG_SLACK = 10000000

# Plot and table columns: (kernel, policy, label).
SERIES = [
    ("vanilla", "default", "vanilla 6.12"),
    ("seed", "default", "2011 patch"),
    ("zerosleep", "full-slack", "zerosleep full-slack"),
    ("zerosleep", "return", "zerosleep return"),
    ("zerosleep", "schedule", "zerosleep schedule"),
]

# Latency rows: (operation, slack: "default" or BIG_SLACK, label).
LATENCY = [
    ("getppid", "default", "getppid()"),
    ("clock_gettime_syscall", "default", "clock_gettime() syscall"),
    ("sched_yield", "default", "sched_yield()"),
    ("nanosleep_einval", "default", "nanosleep() EINVAL"),
    ("clock_nanosleep_einval", "default", "abs. clock_nanosleep() EINVAL"),
    ("nanosleep_rel0", "default", "nanosleep({0,0})"),
    ("nanosleep_abs_now", "default", "abs. at now"),
    ("libc_nanosleep_rel0", "default", "glibc nanosleep({0,0})"),
    ("nanosleep_rel0", BIG_SLACK, "nanosleep({0,0}) 10ms slack"),
    ("nanosleep_abs_now", BIG_SLACK, "abs. at now 10ms slack"),
    ("nanosleep_10us", "default", "nanosleep(10us)"),
    ("nanosleep_100us", "default", "nanosleep(100us)"),
    ("nanosleep_1ms", "default", "nanosleep(1ms)"),
]
BASELINES = {"clock_gettime", "clock_gettime_syscall", "getppid", "sched_yield",
             "nanosleep_einval", "clock_nanosleep_einval"}
# Rows of the tables that the plot leaves out, to stay readable.
NOT_PLOTTED = {"libc_nanosleep_rel0", "clock_nanosleep_einval", "clock_gettime_syscall"}

FAIRNESS = [
    ("hog_vs_nanosleep_rel0", "vs nanosleep({0,0}) loop"),
    ("hog_vs_sched_yield", "vs sched_yield() loop"),
    ("hog_vs_getppid", "vs getppid() loop"),
]


def fail(msg):
    print("report.py: " + msg, file=sys.stderr)
    sys.exit(2)


class Results:
    def __init__(self, path):
        self.rows = {}
        self.default_slack = None
        try:
            with open(path, newline="") as f:
                for r in csv.DictReader(f):
                    key = (r["kernel"], r["policy"], int(r["slack_ns"]), r["operation"])
                    self.rows[key] = r
                    if r["operation"] == "getppid" and r["kernel"] == "zerosleep":
                        self.default_slack = int(r["slack_ns"])
        except (OSError, KeyError, ValueError) as e:
            fail("cannot read %s: %s" % (path, e))
        if self.default_slack is None:
            fail("%s has no getppid row for the zerosleep kernel" % path)

    def slack(self, s):
        return self.default_slack if s == "default" else s

    def get(self, kernel, policy, op, slack="default"):
        """The row for an operation; baselines have no policy ("-")."""
        if op in BASELINES or op == "hog_solo":
            policy = "-"
        if op in ("hog_vs_sched_yield", "hog_vs_getppid"):
            policy = "-"
        return self.rows.get((kernel, policy, self.slack(slack), op))

    def boots(self, kernel, policy, op, field, slack="default"):
        """The values of every boot of a kernel: "vanilla", "vanilla.2"..."""
        names = sorted({k for k, _, _, _ in self.rows
                        if k == kernel or k.startswith(kernel + ".")})
        vals = [self.one(k, policy, op, field, slack) for k in names]
        return [v for v in vals if v is not None]

    def one(self, kernel, policy, op, field, slack="default"):
        r = self.get(kernel, policy, op, slack)
        if r is None or r[field] == "":
            return None
        return float(r[field])

    def num(self, kernel, policy, op, field, slack="default"):
        """A value, as the median over the boots that measured it."""
        v = self.boots(kernel, policy, op, field, slack)
        return median(v) if v else None


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def us(ns):
    return "-" if ns is None else ("%.2f" % (ns / 1e3) if ns < 1e6 else "%.0f" % (ns / 1e3))


def fmt_lat(res, kernel, policy, op, slack):
    # Baselines do not depend on the policy: show them once per kernel.
    if op in BASELINES and policy not in ("default", "full-slack"):
        return ""
    p50 = res.num(kernel, policy, op, "p50_ns", slack)
    p99 = res.num(kernel, policy, op, "p99_ns", slack)
    if p50 is None:
        return "-"
    return "%s / %s" % (us(p50), us(p99))


def tables(res):
    """The summary tables, as (title, header, rows)."""
    out = []
    head = ["operation"] + [s[2] for s in SERIES]
    rows = []
    for op, slack, label in LATENCY:
        rows.append([label] + [fmt_lat(res, k, p, op, slack) for k, p, _ in SERIES])
    out.append(("Latency per call, p50 / p99 in microseconds (the sleeps: median over "
                "the boots of each kernel; with the default slack on a CPU kept busy by a "
                "SCHED_IDLE thread, the others on an idle CPU; baselines once per kernel)",
                head, rows))

    rows = []
    for op, slack, label in LATENCY:
        if op not in ("nanosleep_rel0", "nanosleep_abs_now"):
            continue
        cells = []
        for k, p, _ in SERIES:
            v = res.num(k, p, op, "vcsw_per_call", slack)
            i = res.num(k, p, op, "ivcsw_per_call", slack)
            cells.append("-" if v is None else "%.2f / %.2f" % (v, i))
        rows.append([label] + cells)
    out.append(("Zero sleeps: voluntary / involuntary context switches per call", head, rows))

    rows = []
    for op, label in FAIRNESS:
        cells = []
        for k, p, _ in SERIES:
            if op != "hog_vs_nanosleep_rel0" and p not in ("default", "full-slack"):
                cells.append("")
                continue
            v = res.num(k, p, op, "value")
            cells.append("-" if v is None else "%.0f %%" % v)
        rows.append(["hog " + label] + cells)
    cells = []
    for k, p, _ in SERIES:
        v = res.num(k, p, "python_sleep0", "value")
        cells.append("-" if v is None else "%.0f" % v)
    rows.append(["python time.sleep(0), calls/s"] + cells)
    out.append(("Pinned CPU hog, throughput in % of solo; CPython loop", head, rows))
    return out


def print_table(title, head, rows):
    widths = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
    print(title)
    line = "  ".join(h.ljust(w) for h, w in zip(head, widths))
    print("  " + line)
    for r in rows:
        print("  " + "  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    print()


def md_table(title, head, rows):
    s = "%s\n\n| %s |\n|%s\n" % (title, " | ".join(head), "---|" * len(head))
    for r in rows:
        s += "| %s |\n" % " | ".join(str(c) for c in r)
    return s + "\n"


class Targets:
    def __init__(self):
        self.items = []

    def add(self, name, ok, value, info=False):
        verdict = "INFO" if info else ("PASS" if ok else "FAIL")
        self.items.append((verdict, name, value))

    def missing(self, name):
        self.items.append(("FAIL", name, "no measurement"))

    @property
    def failed(self):
        return [t for t in self.items if t[0] == "FAIL"]

    @property
    def checked(self):
        return [t for t in self.items if t[0] != "INFO"]


def targets(res):
    t = Targets()
    zs, van = "zerosleep", "vanilla"
    forms = [("nanosleep_rel0", "nanosleep({0,0})"), ("nanosleep_abs_now", "abs. at now")]
    slacks = [("default", "default slack"), (BIG_SLACK, "10 ms slack")]

    for policy, base, label in (("return", "getppid", "getppid()"),
                                ("schedule", "sched_yield", "sched_yield()")):
        floor = res.num(zs, "-", base, "p50_ns")
        for op, opl in forms:
            for s, sl in slacks:
                name = "%s: %s p50 <= 1.5 x %s p50 (%s)" % (policy.upper(), opl, label, sl)
                v = res.num(zs, policy, op, "p50_ns", s)
                if v is None or not floor:
                    t.missing(name)
                    continue
                t.add(name, v <= 1.5 * floor,
                      "%.2f us vs %.2f us: %.2f x" % (v / 1e3, floor / 1e3, v / floor))
        # For the reader: the same call through the C library, and the
        # cost of the system call's own entry and argument checks.
        v = res.num(zs, policy, "libc_nanosleep_rel0", "p50_ns")
        if v is not None and floor:
            t.add("%s: glibc nanosleep({0,0}) p50 / %s p50 (reference)" % (policy.upper(), label),
                  True, "%.2f us vs %.2f us: %.2f x" % (v / 1e3, floor / 1e3, v / floor), True)
        for op, opl, einval, el in (
                ("nanosleep_rel0", "nanosleep({0,0})", "nanosleep_einval", "nanosleep()"),
                ("nanosleep_abs_now", "abs. at now", "clock_nanosleep_einval",
                 "abs. clock_nanosleep()")):
            v = res.num(zs, policy, op, "p50_ns")
            e = res.num(zs, "-", einval, "p50_ns")
            if policy == "return" and v is not None and e and floor:
                t.add("RETURN: %s p50 vs the same call failing with EINVAL (reference)" % opl,
                      True, "%.2f us vs %.2f us: %+.2f us; %s EINVAL alone is %.2f x getppid()" % (
                          v / 1e3, e / 1e3, (v - e) / 1e3, el, e / floor), True)
        # An absolute deadline can be known to be "at or before now" only
        # by reading the clock.  What one clock read costs in the kernel is
        # shown by the clock_gettime() system call against getppid().
        v = res.num(zs, policy, "nanosleep_abs_now", "p50_ns")
        e = res.num(zs, "-", "clock_nanosleep_einval", "p50_ns")
        c = res.num(zs, "-", "clock_gettime_syscall", "p50_ns")
        if policy == "return" and v is not None and e and c and floor:
            t.add("RETURN: abs. at now p50 vs the rejected call, and the cost of one clock "
                  "read in the kernel: clock_gettime() syscall - getppid() (reference)",
                  True, "%.2f us = %.2f us + %.2f us; a clock read costs %.2f us - %.2f us = "
                  "%.2f us, %.2f x getppid()" % (v / 1e3, e / 1e3, (v - e) / 1e3, c / 1e3,
                                                  floor / 1e3, (c - floor) / 1e3,
                                                  (c - floor) / floor), True)

    for policy, info, what in (("schedule", False, "keeps at least 80 %"),
                               ("return", True, "keeps about half (expected)"),
                               ("full-slack", True, "share (reference)")):
        name = "%s: pinned hog %s of its solo throughput" % (
            policy.upper().replace("-", "_"), what)
        v = res.num(zs, policy, "hog_vs_nanosleep_rel0", "value")
        if v is None:
            t.missing(name)
            continue
        t.add(name, v >= 80.0, "%.1f %%" % v, info)

    # Across boots: the median over the boots of each kernel.
    def across(name, policy, op, s="default"):
        a = res.boots(zs, policy, op, "p50_ns", s)
        b = res.boots(van, "default", op, "p50_ns", s)
        if not a or not b:
            t.missing(name)
            return
        ma, mb = median(a), median(b)
        r = ma / mb
        t.add(name, 0.9 <= r <= 1.1, "%s us / %s us = %.3f (medians of %d and %d boots: %s / %s)" % (
            us(ma), us(mb), r, len(a), len(b),
            " ".join(us(x) for x in a), " ".join(us(x) for x in b)))

    for op, opl in forms:
        for s, sl in slacks:
            across("FULL_SLACK: %s p50 zerosleep / vanilla in [0.9, 1.1] (%s)" % (opl, sl),
                   "full-slack", op, s)

    for op, label in (("nanosleep_10us", "10 us"), ("nanosleep_100us", "100 us"),
                      ("nanosleep_1ms", "1 ms")):
        for policy in ("full-slack", "return", "schedule"):
            across("non-zero sleep %s: p50 zerosleep %s / vanilla in [0.9, 1.1]" % (label, policy),
                   policy, op)

    name = "Python time.sleep(0): RETURN calls/s >= 20 x vanilla (default slack)"
    a = res.num(zs, "return", "python_sleep0", "value")
    b = res.num(van, "default", "python_sleep0", "value")
    if a is None or not b:
        t.missing(name)
    else:
        t.add(name, a >= 20 * b, "%.0f / %.0f = %.1f x" % (a, b, a / b))
    return t


def plot(res, outdir):
    dat = os.path.join(outdir, "latency.dat")
    png = os.path.join(outdir, "latency.png")
    with open(dat, "w") as f:
        f.write("# latency in us: label, then p50 p50 p99 for each series\n")
        for op, slack, label in LATENCY:
            if op in NOT_PLOTTED:
                continue
            cols = []
            for k, p, _ in SERIES:
                if op in BASELINES and p not in ("default", "full-slack"):
                    cols += ["?"] * 3
                    continue
                p50 = res.num(k, p, op, "p50_ns", slack)
                p99 = res.num(k, p, op, "p99_ns", slack)
                if p50 is None:
                    cols += ["?"] * 3
                else:
                    cols += ["%.3f" % (p50 / 1e3), "%.3f" % (p50 / 1e3), "%.3f" % (p99 / 1e3)]
            f.write('"%s" %s\n' % (label, " ".join(cols)))
        f.write("\n\n# hog throughput, % of solo\n")
        for op, label in FAIRNESS:
            cols = []
            for k, p, _ in SERIES:
                v = None
                if op == "hog_vs_nanosleep_rel0" or p in ("default", "full-slack"):
                    v = res.num(k, p, op, "value")
                cols.append("?" if v is None else "%.1f" % v)
            f.write('"%s" %s\n' % (label, " ".join(cols)))
        f.write("\n\n# python time.sleep(0), calls/s\n")
        cols = []
        for k, p, _ in SERIES:
            v = res.num(k, p, "python_sleep0", "value")
            cols.append("?" if v is None else "%.0f" % v)
        f.write('"time.sleep(0)" %s\n' % " ".join(cols))

    colors = ["#555555", "#e69f00", "#0072b2", "#009e73", "#cc79a7"]
    gp = []
    gp.append('if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {')
    gp.append('  set terminal pngcairo size 1600,1100 font "sans,11"')
    gp.append('} else {')
    gp.append('  set terminal png size 1600,1100 font "sans,11"')
    gp.append('}')
    gp.append('set output "%s"' % png)
    gp.append('set termoption noenhanced')
    gp.append('set datafile missing "?"')
    gp.append('set style fill solid 0.85 border -1')
    gp.append('set grid ytics mytics lc rgb "#dddddd"')
    gp.append('set key top left horizontal')
    gp.append('set multiplot title "zerosleep benchmark: Linux 6.12 under QEMU TCG, 2 vCPUs '
              '(ratios matter, not absolute times)" font ",14"')

    # Latency: p50 bars, error bar up to p99.
    gp.append('set origin 0,0.38')
    gp.append('set size 1,0.58')
    gp.append('set title "Latency per call: bar = p50, whisker = p99 (log scale); '
              'default-slack sleeps on a CPU kept busy by a SCHED_IDLE thread"')
    gp.append('set logscale y')
    gp.append('set yrange [0.1:100000]')
    gp.append('set format y "%g"')
    gp.append('set ylabel "microseconds"')
    gp.append('set style data histogram')
    gp.append('set style histogram errorbars gap 1 lw 1')
    gp.append('set boxwidth 0.9')
    gp.append('set xtics rotate by -20 left nomirror')
    gp.append('set bars front')
    parts = []
    for i, (_, _, label) in enumerate(SERIES):
        c = 2 + 3 * i
        parts.append('"%s" index 0 using %d:%d:%d%s title "%s" lc rgb "%s"' % (
            dat, c, c + 1, c + 2, ":xtic(1)" if i == 0 else "", label, colors[i]))
    gp.append("plot " + ", \\\n     ".join(parts))

    # Fairness.
    gp.append('unset logscale y')
    gp.append('set origin 0,0')
    gp.append('set size 0.62,0.36')
    gp.append('set title "Pinned CPU hog: throughput while another thread on its CPU loops"')
    gp.append('set yrange [0:120]')
    gp.append('set ylabel "% of solo"')
    gp.append('set style histogram clustered gap 1')
    gp.append('set xtics norotate center')
    gp.append('unset key')
    parts = []
    for i, (_, _, label) in enumerate(SERIES):
        parts.append('"%s" index 1 using %d%s title "%s" lc rgb "%s"' % (
            dat, 2 + i, ":xtic(1)" if i == 0 else "", label, colors[i]))
    gp.append("plot " + ", \\\n     ".join(parts) +
              ', 80 with lines dt 2 lc rgb "black" title "80 % target"')

    # Python.
    gp.append('set origin 0.62,0')
    gp.append('set size 0.38,0.36')
    gp.append('set title "CPython loop of time.sleep(0)"')
    gp.append('set logscale y')
    gp.append('set yrange [100:*]')
    gp.append('set ylabel "calls per second (log)"')
    gp.append('unset key')
    parts = []
    for i, (_, _, label) in enumerate(SERIES):
        parts.append('"%s" index 2 using %d%s title "%s" lc rgb "%s"' % (
            dat, 2 + i, ":xtic(1)" if i == 0 else "", label, colors[i]))
    gp.append("plot " + ", \\\n     ".join(parts))
    gp.append('unset multiplot')
    with open(os.path.join(outdir, "latency.gp"), "w") as f:
        f.write("\n".join(gp) + "\n")


def main():
    if len(sys.argv) != 3:
        fail("usage: report.py RESULTS.CSV OUTDIR")
    res = Results(sys.argv[1])
    outdir = sys.argv[2]

    md = ""
    print()
    for title, head, rows in tables(res):
        print_table(title, head, rows)
        md += md_table(title, head, rows)

    t = targets(res)
    width = max(len(name) for _, name, _ in t.items)
    print("Targets (issue 5)")
    md += "Targets\n\n| target | measured | result |\n|---|---|---|\n"
    for verdict, name, value in t.items:
        print("  %-4s  %s  %s" % (verdict, name.ljust(width), value))
        md += "| %s | %s | %s |\n" % (name, value, verdict)
    passed = len(t.checked) - len(t.failed)
    print("  %d of %d targets passed" % (passed, len(t.checked)))
    md += "\n%d of %d targets passed.\n" % (passed, len(t.checked))
    with open(os.path.join(outdir, "summary.md"), "w") as f:
        f.write(md)
    plot(res, outdir)
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
