"""The process cases run the global reactor in a thread, which a reactor can do only
once per Python process: they run in a pytest of their own (see test_processes.py)."""

collect_ignore = ["negotiator_process_cases.py"]
