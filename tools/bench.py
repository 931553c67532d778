#!/usr/bin/env python3
"""make bench (tools/btsx/bench.py): boot times, the ISO size and the in-kernel figures.
Python puts this file's folder first on sys.path, where it finds the btsx package."""
import sys

from btsx.bench import main

sys.exit(main())
