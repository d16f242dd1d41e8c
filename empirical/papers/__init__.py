"""One unit per paper: its problems, experiments, audits and real-data parts."""
