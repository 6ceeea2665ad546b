"""A process that submits clusters to a queue without end and acknowledges each one on
stdout only after its transaction committed; the crash test kills it with SIGKILL."""

import random
import sys
import time

from classad import ClassAd
from schedd.queue import JobQueue


def main(spool: str, seed: int, chunk: int | None = None) -> None:
    """Submit for ever; with ``chunk``, each cluster ``chunk`` procs per transaction
    (acknowledged after the last), as the schedd stores a large one."""
    rng = random.Random(seed)
    queue = JobQueue(spool, time.time)
    print("READY", flush=True)
    while True:
        count = rng.randint(1, 40)
        cluster = ClassAd({"Owner": "crash", "Cmd": "/bin/true", "ExpectedProcs": count})
        procs = [ClassAd({"Args": f"{i} of {count}"}) for i in range(count)]
        if chunk is None:
            cluster_id = queue.submit_cluster(cluster, procs)
        else:
            submit = queue.submit_in_steps(cluster, procs, chunk=chunk)
            while not submit.step():
                pass
            cluster_id = submit.cluster_id
        print(f"ACK {cluster_id} {count}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else None)
