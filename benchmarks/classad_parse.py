"""How fast machine ads are read, in the three forms HTCondor writes them: the old
syntax (what the collector and `condor_status -l` print), the new syntax
(``[ a = 1; ... ]``) and JSON (`condor_status -json`). 2,000 ads of 13 attributes
each (``--ads`` for the full scale), printed as attributes per second of the
reading thread's CPU time, best of ``--repeat`` runs, with the longest CPU time
spent on a single ad (a daemon reading ads on its reactor stalls that long at most).
CPU time, not wall time: on a machine shared with other work, wall time mostly
measures the other processes.

With ``--baseline-python`` (a Python with HTCondor's ``htcondor`` package importable),
the same texts are read by HTCondor's ``classad2.parseAds`` in a child process and
the ratio roost/HTCondor is printed for each form (above 1 means Roost is faster).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time

FORMS = ("Old", "New", "JSON")


def machine_attrs(i: int) -> list[tuple[str, str]]:
    """The attributes of machine ``i`` as ``(name, expression text)``."""
    return [
        ("Name", f'"slot1@node{i}.example.org"'),
        ("Machine", f'"node{i}.example.org"'),
        ("MyType", '"Machine"'),
        ("Arch", '"X86_64"'),
        ("OpSys", '"LINUX"'),
        ("Cpus", str(1 + i % 32)),
        ("Memory", str(2048 * (1 + i % 16))),
        ("Disk", str(10000000 + i)),
        ("LoadAvg", f"{0.01 * (i % 100):.2f}"),
        ("KFlops", str(900000 + i)),
        ("HasFileTransfer", "true"),
        ("State", '"Unclaimed"'),
        ("Requirements", "(START) && (TARGET.RequestMemory <= Memory)"),
    ]


def _json_value(text: str) -> str:
    """An expression's JSON text: literals as JSON values, the rest as HTCondor
    writes expressions, a string ``"\\/Expr(...)\\/"``."""
    try:
        return json.dumps(json.loads(text))
    except ValueError:
        return json.dumps(text).replace('"', '"\\/Expr(', 1)[:-1] + ')\\/"'


def ads_text(n: int, form: str, first: int = 0) -> str:
    """Machine ads ``first`` to ``first + n - 1`` written in ``form`` (one of
    :data:`FORMS`); JSON as one object per ad, which both readers take."""
    ads = [machine_attrs(i) for i in range(first, first + n)]
    if form == "Old":
        return "\n\n".join("\n".join(f"{k} = {v}" for k, v in ad) for ad in ads) + "\n"
    if form == "New":
        return "\n".join("[ " + "; ".join(f"{k} = {v}" for k, v in ad) + " ]" for ad in ads) + "\n"
    return "\n".join("{ " + ", ".join(f"{json.dumps(k)}: {_json_value(v)}" for k, v in ad) + " }"
                     for ad in ads) + "\n"


def parse_all(module, text: str, parser_type) -> tuple[float, int, float]:
    """CPU seconds of this thread to read every ad, attributes read, and the longest
    single ad (CPU time too: on a shared machine, wall time mostly measures the
    other processes)."""
    clock = time.thread_time
    ads = iter(module.parseAds(text, parser_type))
    count = 0
    longest = 0.0
    start = clock()
    while True:
        before = clock()
        ad = next(ads, None)
        if ad is None:
            break
        count += len(ad)
        longest = max(longest, clock() - before)
    return clock() - start, count, longest


def measure(module, args) -> dict:
    """Per form: best attributes/s over the repeats, attributes read, longest ad in ms."""
    results = {}
    for form in FORMS:
        kind = getattr(module.ParserType, form)
        # each run reads other machines, so that no run reads text an earlier one cached
        runs = [parse_all(module, ads_text(args.ads, form, r * args.ads), kind) for r in range(args.repeat)]
        best = min(runs)
        results[form] = {"rate": best[1] / best[0], "count": best[1],
                         "longest_ms": max(r[2] for r in runs) * 1000}
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ads", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline-python", default=os.environ.get("ROOST_HTCONDOR_PYTHON"))
    parser.add_argument("--as-baseline", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.as_baseline:
        import classad2
        import htcondor2  # noqa: F401 - switches on the HTCondor layer, as daemons run
        print(json.dumps(measure(classad2, args)))
        return
    import classad

    theirs = None
    if args.baseline_python:  # the baseline first, then ours: the same machine state
        cmd = [args.baseline_python, __file__, "--as-baseline", "--ads", str(args.ads), "--repeat", str(args.repeat)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"baseline failed: {done.stderr.strip().splitlines()[-1:]}")
        else:
            theirs = json.loads(done.stdout)
    ours = measure(classad, args)
    for form in FORMS:
        mine = ours[form]
        line = (f"{form:4} roost classad: {mine['rate']:,.0f} attributes/s ({mine['count']} attributes),"
                f" longest ad {mine['longest_ms']:.2f} ms")
        if theirs:
            other = theirs[form]
            line += (f"; HTCondor classad2: {other['rate']:,.0f} attributes/s ({other['count']}),"
                     f" longest ad {other['longest_ms']:.2f} ms; ratio roost/HTCondor = {mine['rate'] / other['rate']:.2f}")
        print(line)
    if not args.baseline_python:
        print("no HTCondor baseline: pass --baseline-python or set ROOST_HTCONDOR_PYTHON")


if __name__ == "__main__":
    main()
