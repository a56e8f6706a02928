#!/bin/sh
# mpirun's remote launcher for the namespace hosts (plm_rsh_agent): called as ssh would be,
# "rsh_agent.sh [options] HOST COMMAND...", it runs COMMAND on HOST (entering its network,
# UTS and mount namespaces) with a fresh environment plus the host's own, as sshd would.
while [ $# -gt 0 ]; do case $1 in -*) shift ;; *) break ;; esac; done
host=$1; shift
pidf="$HOSTS_DIR/$host.pid"
[ -n "$HOSTS_DIR" ] && [ -r "$pidf" ] || { echo "rsh_agent: unknown host $host" >&2; exit 255; }
# shellcheck disable=SC2046
exec nsenter -t "$(cat "$pidf")" -n -u -m -- env -i PATH="$PATH" HOME="${HOME:-/root}" \
    HOSTS_DIR="$HOSTS_DIR" $(cat "$HOSTS_DIR/$host.env") /bin/sh -c "$*"
