"""How fast old-syntax machine ads are read (what the collector and `condor_status -l`
output look like): 2,000 ads of 13 attributes, printed as attributes per second.

With ``--baseline-python`` (a Python with ``pip install htcondor``), the same text is
read by HTCondor's ``classad2.parseAds`` in a child process and the ratio is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time


def machine_ads_old(n: int) -> str:
    ads = []
    for i in range(n):
        ads.append("\n".join([
            f'Name = "slot1@node{i}.example.org"',
            f'Machine = "node{i}.example.org"',
            'MyType = "Machine"',
            'Arch = "X86_64"',
            'OpSys = "LINUX"',
            f'Cpus = {1 + i % 32}',
            f'Memory = {2048 * (1 + i % 16)}',
            f'Disk = {10000000 + i}',
            f'LoadAvg = {0.01 * (i % 100):.2f}',
            f'KFlops = {900000 + i}',
            'HasFileTransfer = true',
            'State = "Unclaimed"',
            'Requirements = (START) && (TARGET.RequestMemory <= Memory)',
        ]))
    return "\n\n".join(ads) + "\n"


def parse_all(module, text: str, parser_type) -> tuple[float, int]:
    start = time.perf_counter()
    count = sum(len(ad) for ad in module.parseAds(text, parser_type))
    return time.perf_counter() - start, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ads", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline-python", default=os.environ.get("ROOST_HTCONDOR_PYTHON"))
    parser.add_argument("--as-baseline", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    text = machine_ads_old(args.ads)
    if args.as_baseline:
        import classad2
        import htcondor2  # noqa: F401
        best = min(parse_all(classad2, text, classad2.ParserType.Old)[0] for _ in range(args.repeat))
        print(json.dumps({"rate": args.ads * 13 / best}))
        return
    import classad

    best, count = min(parse_all(classad, text, classad.ParserType.Old) for _ in range(args.repeat))
    ours = count / best
    print(f"roost classad: {ours:,.0f} attributes/s ({count} attributes in {best * 1000:.0f} ms)")
    if not args.baseline_python:
        print("no HTCondor baseline: pass --baseline-python or set ROOST_HTCONDOR_PYTHON")
        return
    cmd = [args.baseline_python, __file__, "--as-baseline", "--ads", str(args.ads)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"baseline failed: {done.stderr.strip().splitlines()[-1:]}")
        return
    theirs = json.loads(done.stdout)["rate"]
    print(f"HTCondor classad2: {theirs:,.0f} attributes/s; ratio roost/HTCondor = {ours / theirs:.2f}")


if __name__ == "__main__":
    main()
