# services.sh: for the tests that start real services (sourced after lib.sh).
# Each service runs in its own PID and mount namespace, so that stopping
# the namespace's first process (by its PID) ends every process the service
# started, and its mounts vanish with it: nothing is left behind, whatever
# state a test stops in. Ports are chosen free, on 127.0.0.1 only.
SERVICES=""
BACKGROUND=""

# skip_all REASON: the whole file is SKIP, as TAP says it
skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}

# need_root_and COMMAND...: skip unless root, with every command there
need_root_and() {
	[ "$(id -u)" -eq 0 ] || skip_all "not root"
	for _c in "$@"; do
		command -v "$_c" >/dev/null 2>&1 || skip_all "$_c is not installed"
	done
	unshare --mount --pid --fork --kill-child true 2>/dev/null ||
		skip_all "unshare cannot make mount and PID namespaces here"
}

# free_port: a TCP port of 127.0.0.1 that nothing listens on now
free_port() {
	"$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ns_start [UNSHARE-OPTION...] -- COMMAND...: COMMAND in new PID and mount
# namespaces, in the background; sets NS_PID to unshare's PID.
ns_start() {
	_opts=""
	while [ "$1" != "--" ]; do _opts="$_opts $1"; shift; done
	shift
	# shellcheck disable=SC2086
	unshare --mount --pid --fork --kill-child $_opts "$@" 2>>"$WORK/namespaces.log" &
	NS_PID=$!
	SERVICES="$SERVICES $NS_PID"
}

# ns_stop PID: ends the namespace that ns_start made (every process in it),
# and waits for unshare
ns_stop() {
	_kids=$(cat "/proc/$1/task/$1/children" 2>/dev/null)
	if [ -n "$_kids" ]; then
		# shellcheck disable=SC2086
		kill -KILL $_kids 2>/dev/null
	else
		kill -KILL "$1" 2>/dev/null # its child dies with it (--kill-child)
	fi
	wait "$1" 2>/dev/null
	SERVICES=$(echo "$SERVICES" | tr ' ' '\n' | grep -v -x "$1" | tr '\n' ' ')
}

# bg_start COMMAND...: COMMAND in the background; sets BG_PID
bg_start() {
	"$@" &
	BG_PID=$!
	BACKGROUND="$BACKGROUND $BG_PID"
}

# poll SECONDS COMMAND...: runs COMMAND until it succeeds, for up to SECONDS
poll() {
	_end=$(($(date +%s) + $1))
	shift
	while ! "$@"; do
		[ "$(date +%s)" -lt "$_end" ] || return 1
		sleep 0.05
	done
}

services_cleanup() {
	for _p in $BACKGROUND; do
		kill -TERM "$_p" 2>/dev/null && wait "$_p" 2>/dev/null
	done
	for _p in $SERVICES; do
		ns_stop "$_p"
	done
	rm -rf "$WORK"
}
trap services_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
