"""The information architecture for data disclosure: a workflow, ``anoneval architecture CONFIG``.

Pflughoeft, Soofi & Soyer (2022), Section 2 and Figure 1: sixteen tasks and six decision nodes.
An ME model is fitted to the actual data, a statistical replica is drawn from it, and the replica
is released only when every inspection passes:

==== ====== ===============================================================================
node task   decision (thresholds from the config's ``thresholds``)
==== ====== ===============================================================================
1    7      the kernel density f̃ keeps the data's information moments: |θ_j − θ̃_j| ≤ tol
2    9      the ME model f* fits f̃: K(f̃ : f*) ≤ ``model_kl`` (grid, eqs. 22-25)
3    11     the replica looks drawn from f*: energy-test p-values ≥ ``energy_alpha``
4    12     replica points are not near actual points: π_d < ``close_pairs_epsilon``
5    14     the replica keeps the information moments: |θ_j − θ*_j| ≤ tol
6    16     the replica's ME model f** stays close to f*: K(f* : f**) ≤ ``replica_kl``
==== ====== ===============================================================================

Nodes 1-2 judge the model: when they fail, no replica is drawn (the model must be revised).
Nodes 3-6 judge the replica: when one fails, a new replica is drawn with seed + attempt, up to
``max_attempts`` times. The released data are written (atomically) only when all six pass; the
report (JSON) lists each task's figures and each node's decision, and names the failing node
otherwise. Plots of Pflughoeft et al.'s Figures 2-5 are PNG files (matplotlib, the ``report``
extra).

The synthesizer is any registered one taking ``columns`` and ``transform`` (the ME family);
its model density f* is exact for MaxEntNormal (normal) and MaxEntLogistic (Gumbel logistic)
and otherwise a kernel density of a large draw from the model (``model_sample`` rows).
The config is :class:`ArchitectureConfig` (``"workflow": "architecture"`` marks it for
``anoneval validate``; ``config.py``); ``command.py`` registers it and the ``architecture``
command through the ``workflow`` and ``register_commands`` hooks. That module is imported
whenever a registry is built: it imports numpy/pandas/pydantic/click only. The run is in
``run.py``, the model densities in ``model.py``, the figures in ``plots.py``.
"""
