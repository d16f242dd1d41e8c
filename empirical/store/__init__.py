"""What the harness keeps on disk: analyses, audit results and figures, written atomically and
keyed on fingerprints of the code that made them."""
