"""Workers: placed workflow steps run on other machines, through Dask
distributed (docs/workers.md). ``placement`` maps labels to Dask worker
resources, ``dispatch`` submits a step and waits for it, ``task`` is what a
worker runs, ``worker`` starts and lists workers."""
