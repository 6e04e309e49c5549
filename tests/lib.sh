# lib.sh: TAP helpers for the shell tests (sourced; needs $BOIDSIM, $srcdir).
: "${BOIDSIM:?BOIDSIM must point at the built boidsim}"
: "${srcdir:?srcdir must point at the source tree}"
TAP_N=0
TAP_FAILED=0
WORK=$(mktemp -d "${TMPDIR:-/tmp}/boidsim-test.XXXXXX") || exit 99
trap 'rm -rf "$WORK"' EXIT

ok() { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N - $*"; }
not_ok() { TAP_N=$((TAP_N + 1)); TAP_FAILED=$((TAP_FAILED + 1)); echo "not ok $TAP_N - $*"; }
# check DESCRIPTION COMMAND...: ok when the command succeeds
check() { d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
diag() { printf '# %s\n' "$@"; }
finish() { echo "1..$TAP_N"; [ "$TAP_FAILED" -eq 0 ]; }
