#!/bin/sh
# runsc-netstack.sh: gVisor's runsc as a Docker runtime with its own network stack
# (netstack, --network=sandbox, its default), on kernels that show net.core.rmem_default
# in every network namespace (6.x; this workplace's 6.18 does, Debian 12's 6.1 does not).
# runsc up to 2024 tells "am I in the host's network namespace?" by whether
# /proc/sys/net/core/rmem_default exists, and refuses to start there ("cannot run with
# network enabled in root network namespace"; gVisor issue 10704): on such a kernel it
# refuses every container, Docker's own network namespaces included. This runs runsc in a
# mount namespace of its own where /proc/sys/net is an empty read-only tmpfs, so that the
# check says what is true for Docker: a container's namespace is never the host's (Docker
# passes none for --network host, and runsc then makes an empty one). Nothing else of
# runsc reads /proc/sys/net. Decision 0084.
#
# daemon.json: {"runtimes": {"runsc": {"path": "/usr/lib/sandboxd/runsc-netstack",
#   "runtimeArgs": ["--platform=ptrace", "--file-access=shared"]}}}
# The runsc it runs: $SANDBOXD_RUNSC, else runsc on PATH, else /usr/bin/runsc.
runsc=${SANDBOXD_RUNSC:-$(command -v runsc || echo /usr/bin/runsc)}
# shellcheck disable=SC2016 # the inner sh expands them
exec unshare --mount --propagation private -- sh -c \
	'mount -t tmpfs -o ro,size=4k,mode=0555 sandboxd-no-net-sysctl /proc/sys/net && exec "$0" "$@"' \
	"$runsc" "$@"
