"""`python -m prosfi.train RECIPE.yaml ...` / `accelerate launch -m prosfi.train RECIPE.yaml ...`."""

import sys

from prosfi.cli import main

if __name__ == "__main__":
    sys.exit(main(["train", *sys.argv[1:]]))
