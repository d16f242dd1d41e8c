"""``python -m empirical.cli``: the dprates command."""
import sys

from empirical.cli import main

sys.exit(main())
