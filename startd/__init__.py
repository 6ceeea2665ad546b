"""The execute side: machine and GPU discovery (pynvml, or a simulated NVML), slots
(static, partitionable and dynamic), claims, and the starter that runs a job in its
sandbox.
"""
