"""``python -m empirical.report``: write the verification report from stored results."""
import sys

from empirical.report import main

sys.exit(main())
