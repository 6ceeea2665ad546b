"""GPU sharing, the way HAMi shares cards: which cards (and how much of each) a job's
request gets. One pure model that submit validation, the negotiator, the startd,
claim reuse and ``-better-analyze`` all use, so a match the negotiator makes is one
the startd accepts."""
