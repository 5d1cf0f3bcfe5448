"""CCSK: decide per question whether to retrieve at all (seed 003), and gate any method.

Light on import: the heavy parts (LightGBM, torch) load only in the modules that need them.

- :mod:`.decision` — :class:`GateDecision`, what a gate decided and why (in every ``Answer``).
- :mod:`.labels` — label files: closed-book vs retrieval answers of one LLM, SKR's rule, the
  RQM target, provenance (which LLM, retriever, k, prompts).
- :mod:`.sn`, :mod:`.rqm`, :mod:`.fusion`, :mod:`.rule`, :mod:`.grid` — the paper's parts.
- :mod:`.gates` — the :class:`~quaderno.gate.protocol.Gate` implementations (CCSK and the
  Table 2 baselines); :mod:`.store` saves and loads them; :mod:`.train` trains them.
- :mod:`.scoring` — EM/F1/ACC, retrieval rate, net gain, AUROC, per-branch tables.
- :mod:`.wrapper` — :class:`GatedMethod`, a gate in front of any registered method.
"""
