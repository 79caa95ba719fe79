# Sourced by launch/gpu_smoke.sh and launch/gpu_experiment.sh (not run on its own): the Python to use, this
# tree and a WHEELS folder on PYTHONPATH, and the one-line preflight (prosfi.train.gpu_check).
#
# A GPU image may have torch and transformers but not TRL, PEFT, accelerate, datasets, Z3, ...: set
# WHEELS to a folder of .whl files (unpacked once into WHEELS_SITE, default /tmp/prosfi-wheels) or to a
# folder of unpacked packages (put on PYTHONPATH as it is). docs/multi-gpu.md says which wheels and how.
# prosfi itself runs from this tree (`python -m prosfi.cli`), installed or not.

PY="${PYTHON:-$(command -v python3 || command -v python)}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

use_wheels() {  # NAME: the script's name, for the message
  [[ -n "${WHEELS:-}" ]] || return 0
  if [[ ! -d "$WHEELS" ]]; then echo "$1: FAIL [preflight] WHEELS=$WHEELS is not a folder"; exit 1; fi
  local site="$WHEELS" wheels
  wheels=$(cd "$WHEELS" && ls -1 ./*.whl 2>/dev/null || true)
  if [[ -n "$wheels" ]]; then
    site="${WHEELS_SITE:-${TMPDIR:-/tmp}/prosfi-wheels}"
    if [[ "$(cat "$site/.prosfi-wheels" 2>/dev/null)" != "$wheels" ]]; then  # unpacked once per set of wheels
      rm -rf "$site" && mkdir -p "$site"
      local w
      for w in "$WHEELS"/*.whl; do "$PY" -m zipfile -e "$w" "$site" || { echo "$1: FAIL [preflight] cannot unpack $w"; exit 1; }; done
      printf '%s' "$wheels" >"$site/.prosfi-wheels"
    fi
  fi
  site="$(cd "$site" && pwd)"
  export PYTHONPATH="$PWD:$site${PYTHONPATH#"$PWD"}"
}

preflight() {  # NAME [gpu_check options]: prints its one line; exits 1 when something is missing
  local name="$1"; shift
  "$PY" -m prosfi.train.gpu_check --name "$name" "$@" || exit 1
}

has_module() {  # MODULE: importable here (found, not imported)
  "$PY" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('$1') is None)" 2>/dev/null
}
