import sys

from prosfi.cli import main

sys.exit(main())
