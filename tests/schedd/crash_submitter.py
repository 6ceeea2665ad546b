"""A process that submits clusters to a queue without end and acknowledges each one on
stdout only after its transaction committed; the crash test kills it with SIGKILL."""

import random
import sys
import time

from classad import ClassAd
from schedd.queue import JobQueue


def main(spool: str, seed: int) -> None:
    rng = random.Random(seed)
    queue = JobQueue(spool, time.time)
    print("READY", flush=True)
    while True:
        count = rng.randint(1, 40)
        cluster = ClassAd({"Owner": "crash", "Cmd": "/bin/true", "ExpectedProcs": count})
        cluster_id = queue.submit_cluster(cluster, [ClassAd({"Args": f"{i} of {count}"}) for i in range(count)])
        print(f"ACK {cluster_id} {count}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
