"""The ClassAd language: grammar, expression trees, evaluation, builtin functions,
matching and the three text forms (new syntax, old syntax, JSON).

The public names follow HTCondor's ``classad2`` module, so a script written for it
runs unchanged after ``import classad``. Nothing here does I/O or networking.
"""
