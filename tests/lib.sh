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
# wait_for PATTERN: returns once a file matching the shell pattern exists
# and is not empty, or after two minutes. For killing a run in progress: a
# fixed sleep is too short on a loaded machine (or under the sanitizers)
# and lets a fast one finish.
wait_for() {
	_w=0
	while test "$_w" -lt 6000; do
		for _f in $1; do
			test -s "$_f" && return 0
		done
		sleep 0.02
		_w=$((_w + 1))
	done
	return 1
}
