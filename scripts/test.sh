#!/usr/bin/env bash
# The README's test command: set up .venv (idempotent) and run the whole test suite, slow tests included.
# Extra arguments go to pytest (e.g. `bash scripts/test.sh -m "not slow"` for the fast suite only).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export NUMBA_CACHE_DIR=${NUMBA_CACHE_DIR:-$HOME/.cache/mlirkit-tests/numba}
# ranx's numba kernels, compiled once here (seconds when cached), never by two test workers at once
.venv/bin/python scripts/warm_ranx.py
if [ $# -eq 0 ]; then set -- -m ""; fi
# one compute thread per worker: N workers of N threads each on N cores wait on each other's spinning threads
if [ "${MLIRKIT_TEST_WORKERS:-auto}" != 0 ]; then export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}; fi
set +e
# one worker per core; a test file is one unit of work (tests/conftest.py); MLIRKIT_TEST_WORKERS=0: one process
.venv/bin/python -m pytest -n "${MLIRKIT_TEST_WORKERS:-auto}" --dist loadgroup "$@"
rc=$?
set -e
if [ $rc -eq 5 ]; then echo "error: pytest collected no tests" >&2; exit 1; fi
exit $rc
