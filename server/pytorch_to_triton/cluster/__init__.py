"""Tool calls and suites on a Dask cluster of GPU workers (the optional extra `[cluster]`: dask + distributed).

    client.py     ClusterPool: the WorkerPool interface (call, slots, prestart, close) over a Dask client
    plugin.py     ProjectWorkerPlugin: on each Dask worker, one warm project worker (worker_client.WorkerSlot)
                  pinned to that worker's GPU; run_call, the task every call becomes
    shipping.py   the files a call needs, by content and hash; the remote scratch workspace; path rewriting
    local.py      `--cluster local`: one Dask worker per visible GPU of this machine, each pinned, resources GPU=1

Only client.py and local.py import dask on the server side; the server imports this package only with --cluster.
"""
