#!/usr/bin/env bash
# Runs every check: formatting, vet, unit and integration tests (with the
# race detector on the packages with concurrency), and a short run of every
# fuzz target.
set -euo pipefail
cd "$(dirname "$0")/.."

# The multi-host test (integration/netns_test.go) makes network namespaces
# with iproute2's ip; as root on a Debian machine without it, install it.
if [ "$(id -u)" = 0 ] && ! command -v ip >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
	(apt-get update -qq && apt-get install -y -qq iproute2) >/dev/null 2>&1 ||
		echo "test.sh: could not install iproute2; the multi-host test will skip" >&2
fi

# Site hooks (internal/hookrun, integration/hooks_test.go) run in Debian's
# python3; as root on a Debian machine without it, install it.
if [ "$(id -u)" = 0 ] && [ ! -x /usr/bin/python3 ] && command -v apt-get >/dev/null 2>&1; then
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3) >/dev/null 2>&1 ||
		echo "test.sh: could not install python3; the hook tests will skip" >&2
fi

# The service units' test (integration/systemd_test.go) runs Debian's
# systemd-analyze verify on packaging/systemd; as root on a Debian machine
# without it, install it.
if [ "$(id -u)" = 0 ] && ! command -v systemd-analyze >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends systemd) >/dev/null 2>&1 ||
		echo "test.sh: could not install systemd; the service units' test will skip" >&2
fi

# The web page's browser test (integration/web_browser_test.go) drives
# Debian's headless Chromium; as root on a Debian machine without it,
# install it.
if [ "$(id -u)" = 0 ] && ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1 ||
		echo "test.sh: could not install chromium; the browser test will skip" >&2
fi

# The X11 forwarding test (integration/x11_test.go) shows a job's
# xdpyinfo on Debian's Xvfb; as root on a Debian machine without them,
# install them.
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 &&
	{ ! command -v Xvfb >/dev/null 2>&1 || ! command -v xdpyinfo >/dev/null 2>&1; }; then
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		xvfb x11-utils) >/dev/null 2>&1 ||
		echo "test.sh: could not install Xvfb and x11-utils; the X11 forwarding test will skip" >&2
fi

# The MPI test (integration/mpi_test.go) builds and launches a hello with
# Debian's Open MPI and MPICH, by their own names (mpicc.openmpi,
# mpirun.openmpi, mpicc.mpich, mpiexec.mpich: the plain names are one or
# the other); as root on a Debian machine without them, install them.
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	for cmd in mpicc.openmpi mpirun.openmpi mpicc.mpich mpiexec.mpich gcc; do
		if ! command -v "$cmd" >/dev/null 2>&1; then
			(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
				openmpi-bin libopenmpi-dev mpich libmpich-dev gcc) >/dev/null 2>&1 ||
				echo "test.sh: could not install Open MPI and MPICH; the MPI test will skip" >&2
			break
		fi
	done
fi

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt needed on:" >&2
	echo "$unformatted" >&2
	exit 1
fi
go vet ./...
# examples/ is a module of its own (a site's scheduler outside this one):
# vetting it builds it against this checkout's public packages only.
(cd examples && go vet ./...)
go vet -tags faultpoints ./internal/fault/ ./internal/store/ ./internal/server/ ./internal/mom/ ./internal/shepherd/ ./internal/stagecopy/ ./sched/
go test -count=1 -timeout 15m -parallel 8 ./...
go test -count=1 -tags faultpoints ./internal/fault/
go test -count=1 -race -timeout 10m ./proto/ ./internal/store/ ./internal/server/ ./internal/mom/ ./internal/shepherd/ ./internal/stagecopy/ ./internal/connlimit/ ./internal/listen/ ./internal/web/

# Every fuzz target, briefly; the corpus under testdata/ runs in go test.
# A count, not a duration: a time budget can run out while the corpus is
# still being replayed on a busy machine, which go test reports as a failure.
fuzztime=${FUZZTIME:-5000x}
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //'); do
		if ! out=$(go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" 2>&1); then
			echo "fuzz target $target in $pkg failed:" >&2
			echo "$out" | grep -v '^fuzz: elapsed' >&2
			exit 1
		fi
	done
done
echo "all checks passed"
