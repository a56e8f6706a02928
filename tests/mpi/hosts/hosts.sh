# hosts.sh: several hosts on one machine, for the multi-host tests (bash; sourced by
# run_hosts.sh).
#
# Host i is a process that holds its own network, UTS and mount namespaces: its own
# hostname (node0, node1, ...), its own address 10.213.0.(i+1) on eth0, its own /dev/shm (a
# private tmpfs, so the simulated NPU's cross-process registry is per host, as on real
# machines), and its own /etc/hosts naming every host. The eth0s are veth pairs whose other
# ends sit on a bridge in one more namespace (the switch), so the hosts share one LAN that
# exists only inside these namespaces: nothing here touches the machine's own network.
# The root namespace is never given an address or a route on it.
#
#   hosts_up N [ENV ...]  make N hosts; ENV i ("VAR=v VAR=v") is host i's environment
#   host_exec I CMD...    run CMD on host I with a login-like environment (env -i + host's)
#   host_rename I NAME    host I answers to NAME from now on (hostname)
#   host_kill I [cable]   host I dies: every process on it gets SIGKILL (the kernel closes
#                         their connections, as when a host's processes crash or are
#                         OOM-killed); with "cable", its cable is pulled first, so that no
#                         FIN reaches the others (a power failure, a dead switch port)
#   hosts_down            kill every process on every host and remove the namespaces
# hosts_up installs hosts_down as the EXIT/INT/TERM/HUP trap; each host also watches the
# process that made it and tears itself down if that process is gone (SIGKILL, timeouts).
# Needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN for unshare and ip).

HOSTS_NET=10.213.0                 # a /24 that only the test's namespaces know
HOSTS_DIR=
HOSTS_N=0

hosts_require_root() {
    if [ "$(id -u)" != 0 ]; then
        echo "FAILED: the multi-host tests need root (they create network, UTS and mount" \
             "namespaces with unshare and ip); running as uid $(id -u). Run make test as" \
             "root (CI does) or with sudo." >&2
        exit 1
    fi
    for tool in unshare nsenter ip mount; do
        command -v "$tool" >/dev/null 2>&1 || {
            echo "FAILED: $tool not found (Debian packages util-linux, iproute2; scripts/deps.sh" \
                 "installs them)" >&2
            exit 1
        }
    done
}

# Processes in host NAME's network namespace (its holder included), by the namespace's
# identity recorded at creation, so that they are found even once the holder is gone.
_ns_pids() {
    local ns p
    ns=$(cat "$HOSTS_DIR/$1.ns" 2>/dev/null) && [ -n "$ns" ] || return 0
    if [ "$ns" = "$(readlink /proc/$$/ns/net)" ]; then   # never the machine's own processes
        echo "hosts.sh: $1 is not in a namespace of its own; not touching its processes" >&2
        return 0
    fi
    _pids_in_ns "$ns"
}

# Processes whose network namespace is NS ("net:[inode]"), in one pass over /proc.
_pids_in_ns() {
    local pat
    pat=$(printf '%s' "$1" | sed 's/[][*?\\]/\\&/g')      # -lname takes a glob
    find /proc/[0-9]*/ns/net -maxdepth 0 -lname "$pat" 2>/dev/null | cut -d/ -f3
}

# Start a namespace holder: unshare's own process (it execs sh) keeps the namespaces.
# $1 = name, $2 = unshare flags, $3 = setup commands run inside before it reports ready,
# $4 = commands run after the watch loop ends. In a session of its own (setsid), so that a
# signal to the harness's process group (Ctrl-C) reaches the harness, whose trap tears down,
# and not the holders directly.
_holder() {
    local name=$1 flags=$2 setup=$3 after=${4:-} i=0 d=$HOSTS_DIR parent=$BASHPID
    # The watch loop: once the harness is gone, kill whatever runs in this namespace and
    # exit, so that even a SIGKILLed harness leaves nothing behind.
    # shellcheck disable=SC2086
    setsid unshare $flags sh -c "echo \$\$ > '$d/$name.pid'
        $setup
        readlink /proc/self/ns/net > '$d/$name.ns'
        echo ready > '$d/$name.ready'
        while kill -0 $parent 2>/dev/null; do sleep 1; done
        me=\$(readlink /proc/self/ns/net)
        for p in /proc/[0-9]*; do
            [ \"\$(readlink \$p/ns/net 2>/dev/null)\" = \"\$me\" ] && [ \${p#/proc/} != \$\$ ] &&
                kill -9 \${p#/proc/} 2>/dev/null
        done
        $after" </dev/null >"$d/$name.log" 2>&1 &
    local starter=$!
    disown $starter  # no "Killed" notice from the shell when hosts_down ends it
    while [ ! -e "$d/$name.ready" ]; do
        if ! kill -0 $starter 2>/dev/null && [ ! -e "$d/$name.ready" ] || [ $i -ge 100 ]; then
            echo "FAILED: could not create namespace $name:" >&2
            cat "$d/$name.log" >&2
            exit 1
        fi
        sleep 0.1; i=$((i + 1))
    done
}

_pid() { cat "$HOSTS_DIR/$1.pid"; }
_in() { local n=$1; shift; nsenter -t "$(_pid "$n")" -n -u -m -- "$@"; }

hosts_up() {
    local i
    hosts_require_root
    HOSTS_N=$1; shift
    HOSTS_DIR=$(mktemp -d /tmp/hwrt-hosts.XXXXXX)
    chmod 755 "$HOSTS_DIR"
    trap 'hosts_down' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    trap 'exit 129' HUP
    {
        echo "127.0.0.1 localhost"
        i=0; while [ $i -lt "$HOSTS_N" ]; do echo "$HOSTS_NET.$((i + 1)) node$i"; i=$((i + 1)); done
    } > "$HOSTS_DIR/etc-hosts"
    echo "nameserver 127.0.0.1" > "$HOSTS_DIR/etc-resolv.conf"   # own loopback only
    : > "$HOSTS_DIR/hostfile"
    # the switch's holder also removes HOSTS_DIR when the harness died without its trap
    _holder switch "--net" "ip link set lo up && ip link add br0 type bridge && ip link set br0 up" \
        "sleep 1; rm -rf '$HOSTS_DIR'"
    i=0
    while [ $i -lt "$HOSTS_N" ]; do
        # the host's environment: its own TMPDIR (Open MPI's session directory) and ENV i
        mkdir -m 700 "$HOSTS_DIR/node$i.tmp"
        { echo "TMPDIR=$HOSTS_DIR/node$i.tmp"; printf '%s\n' "${1:-}" | tr ' ' '\n' | grep . || true; } \
            > "$HOSTS_DIR/node$i.env"
        [ $# -gt 0 ] && shift
        _holder "node$i" "--net --uts --mount --propagation private" "
            hostname node$i &&
            mount -t tmpfs -o mode=1777,size=512m hwrt-shm-node$i /dev/shm &&
            mount --bind '$HOSTS_DIR/etc-hosts' /etc/hosts &&
            mount --bind '$HOSTS_DIR/etc-resolv.conf' /etc/resolv.conf &&
            ip link set lo up"
        # the cable: eth0 on the host, port$i on the switch's bridge
        _in "node$i" ip link add eth0 type veth peer name "port$i" netns "$(_pid switch)"
        _in "node$i" ip addr add "$HOSTS_NET.$((i + 1))/24" dev eth0
        _in "node$i" ip link set eth0 up
        nsenter -t "$(_pid switch)" -n ip link set "port$i" master br0 up
        echo "node$i slots=2" >> "$HOSTS_DIR/hostfile"
        i=$((i + 1))
    done
    export HOSTS_DIR
}

host_exec() {
    local n=node$1; shift
    # shellcheck disable=SC2046
    _in "$n" env -i PATH="$PATH" HOME="${HOME:-/root}" HOSTS_DIR="$HOSTS_DIR" \
        $(cat "$HOSTS_DIR/$n.env") "$@"
}

host_rename() { _in "node$1" hostname "$2"; }

host_kill() {
    local n=node$1 p
    [ "${2:-}" = cable ] && nsenter -t "$(_pid switch)" -n ip link set "port$1" down
    for p in $(_ns_pids "$n"); do
        [ "$p" = "$(_pid "$n")" ] || kill -9 "$p" 2>/dev/null
    done
}

hosts_down() {
    local f p
    [ -n "$HOSTS_DIR" ] && [ -d "$HOSTS_DIR" ] || return 0
    for f in "$HOSTS_DIR"/*.ns; do
        [ -e "$f" ] || continue
        for p in $(_ns_pids "$(basename "$f" .ns)"); do kill -9 "$p" 2>/dev/null; done
    done
    for f in "$HOSTS_DIR"/*.ns; do       # SIGKILL is asynchronous: wait until none is left
        [ -e "$f" ] || continue
        for p in $(seq 200); do [ -z "$(_ns_pids "$(basename "$f" .ns)")" ] && break; sleep 0.05; done
    done
    rm -rf "$HOSTS_DIR"
    HOSTS_DIR=
}
