"""Running experiments: the point runner and its row store, the task queue and executors
(process pool, Dask), point costs and progress."""
