#!/usr/bin/env bash
# Builds every binary of the module into DIR (default ./bin); further
# arguments are go build flags for every binary. scripts/start.sh, the test
# harness (internal/testcluster) and tools/pbsbench all build through this
# script, so that what is tested and measured is what is started.
#
# The daemons keep Go's default cgo build: pbs_server and pbs_mom look
# users and groups up (os/user), and only the C library's lookup goes
# through NSS (LDAP, SSSD, NIS users of a real site); the schedulers stay
# with them. Every other binary, the commands above all, is built with
# CGO_ENABLED=0: they look no user up (the server takes the caller's
# identity from the socket) and a static binary starts in about 3 ms
# instead of 5-6 ms (no dynamic loader, no libc start-up), which a workflow
# that runs qsub or qstat once per job pays every time.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bin}
shift || true
mkdir -p "$out"
out=$(cd "$out" && pwd)

# Every binary's main is cmd/<name>; the installed names are the folders'.
daemons=(pbs_server pbs_mom pbs_sched)
skip=$(printf 'github.com/gopbs/gopbs/cmd/%s\n' "${daemons[@]}")
mapfile -t commands < <(go list -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' ./... | grep -v -x -F "$skip")

go build "$@" -o "$out/" "${daemons[@]/#/./cmd/}"
CGO_ENABLED=0 go build "$@" -o "$out/" "${commands[@]}"
# The example schedulers are a module of their own (examples/go.mod), as a
# site's scheduler outside this repository would be: they build only
# against this module's public packages.
(cd examples && go build "$@" -o "$out/" ./swf_sched ./site_ranking)
