"""The harness core: experiment and check declarations, the paper and experiment registries,
validation, slope fitting and verdicts.  Writes no file and starts no process."""
