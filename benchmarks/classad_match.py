"""How fast the negotiator's inner loop is: symmetricMatch of every job against every
machine, plus the Rank of each matching pair, in microseconds per pair.

With ``--baseline-python`` (a Python with ``pip install htcondor``), the same pairs
run through HTCondor's ``classad2`` in a child process and the ratio is printed.
(The version 1 ``classad`` module cannot evaluate Rank against a target ad from
Python, so it is not a like-for-like baseline.)
"""

from __future__ import annotations

import argparse
import time

JOB_REQUIREMENTS = (
    '(TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") && (TARGET.Disk >= RequestDisk)'
    ' && (TARGET.Memory >= RequestMemory) && (TARGET.Cpus >= RequestCpus)'
    ' && (TARGET.GPUs >= RequestGPUs)'
    ' && ((TARGET.FileSystemDomain == MY.FileSystemDomain) || (TARGET.HasFileTransfer))'
)


def job_texts(n: int) -> list[str]:
    return [
        f'[ MyType = "Job"; Owner = "user{i % 7}"; ClusterId = {i}; ProcId = 0; '
        f'RequestCpus = {1 + i % 4}; RequestMemory = {512 * (1 + i % 8)}; '
        f'RequestDisk = {100000 * (1 + i % 3)}; RequestGPUs = {i % 2}; '
        f'FileSystemDomain = "submit.example.org"; Requirements = {JOB_REQUIREMENTS}; '
        f'Rank = TARGET.KFlops / 1000 + TARGET.Memory / 1024 ]'
        for i in range(n)
    ]


def machine_texts(n: int) -> list[str]:
    return [
        f'[ MyType = "Machine"; Name = "slot1@node{i}.example.org"; Arch = "X86_64"; '
        f'OpSys = "{"LINUX" if i % 10 else "WINDOWS"}"; Cpus = {1 + i % 16}; '
        f'Memory = {1024 * (1 + i % 64)}; Disk = {1000000 + i}; GPUs = {i % 3}; '
        f'KFlops = {900000 + 37 * i}; HasFileTransfer = true; '
        f'FileSystemDomain = "node{i}.example.org"; '
        f'START = (TARGET.RequestMemory <= MY.Memory) && (TARGET.Owner =!= "user3"); '
        f'Requirements = START; Rank = 0 ]'
        for i in range(n)
    ]


def run(module, jobs: list[str], machines: list[str]) -> tuple[float, int]:
    """Microseconds per pair and the number of matches, with ``module``'s ClassAd."""
    job_ads = [module.ClassAd(t) for t in jobs]
    machine_ads = [module.ClassAd(t) for t in machines]
    matched = 0
    start = time.perf_counter()
    for job in job_ads:
        for machine in machine_ads:
            if job.symmetricMatch(machine):
                matched += 1
                job.lookup("Rank").eval(job, machine)
    elapsed = time.perf_counter() - start
    return elapsed * 1e6 / (len(job_ads) * len(machine_ads)), matched


def baseline(python: str, args) -> float | None:
    """Run the same pairs through HTCondor's ``classad2`` in the Python at ``python``
    (a virtual environment with ``pip install htcondor``), in a child process."""
    import json
    import subprocess

    cmd = [python, __file__, "--as-baseline", "--jobs", str(args.jobs), "--machines", str(args.machines)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"baseline failed: {done.stderr.strip().splitlines()[-1:]}")
        return None
    result = json.loads(done.stdout)
    print(f"HTCondor {result['module']} {result['version']}: {result['us']:.2f} us/pair ({result['matched']} matches)")
    return result["us"]


def main() -> None:
    import os

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=50)
    parser.add_argument("--machines", type=int, default=2000)
    parser.add_argument("--baseline-python", default=os.environ.get("ROOST_HTCONDOR_PYTHON"),
                        help="a Python with HTCondor's bindings installed, for the side-by-side ratio")
    parser.add_argument("--as-baseline", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    jobs, machines = job_texts(args.jobs), machine_texts(args.machines)
    if args.as_baseline:
        import json

        import classad2 as module
        import htcondor2 as htcondor  # switches on the HTCondor layer, as daemons run
        us, matched = run(module, jobs, machines)
        print(json.dumps({"us": us, "matched": matched, "version": htcondor.version().split()[1],
                          "module": module.__name__}))
        return
    import classad

    ours, matched = run(classad, jobs, machines)
    print(f"roost classad: {ours:.2f} us/pair over {args.jobs * args.machines} pairs ({matched} matches)")
    theirs = baseline(args.baseline_python, args) if args.baseline_python else None
    if theirs:
        print(f"ratio roost/HTCondor = {ours / theirs:.2f} (below 1 means Roost is faster)")
    else:
        print("no HTCondor baseline: pass --baseline-python or set ROOST_HTCONDOR_PYTHON")


if __name__ == "__main__":
    main()
