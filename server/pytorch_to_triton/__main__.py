"""`python -m pytorch_to_triton` is the `pytorch-to-triton` command."""

import sys

from .cli import main

sys.exit(main())
