#!/usr/bin/env bash
# Builds the Debian packages of this tree into DIR (default ./dist) with
# Go and Debian's dpkg-deb alone:
#
#   gopbs-client     every command in /opt/gopbs/bin, pbs_setup and the
#                    login host's agent pbs_login in /opt/gopbs/sbin with
#                    its unit, /etc/profile.d/gopbs.sh (PATH)
#   gopbs-server     pbs_server and pbs_sched in /opt/gopbs/sbin, their
#                    systemd units
#   gopbs-execution  pbs_mom and pbs_shepherd in /opt/gopbs/sbin, its unit
#
# The version is the daemons' (pbs_version) with the commit's date and
# hash. PACKAGE_BIN, when set, names binaries scripts/build.sh made
# already. PBS_EXEC is /opt/gopbs (OpenPBS's /opt/pbs layout), pbs.conf is
# /etc/pbs.conf and PBS_HOME /var/spool/pbs, both written by pbs_setup,
# neither shipped: installing, upgrading or removing a package never
# touches them. An upgrade restarts the daemons that were running; a
# removal stops them.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${1:-dist}
mkdir -p "$out"
out=$(cd "$out" && pwd)
command -v dpkg-deb >/dev/null || { echo "package.sh: dpkg-deb is needed (Debian's dpkg)" >&2; exit 1; }

base=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' internal/mom/agent.go)
[ -n "$base" ] || { echo "package.sh: cannot find the version in internal/mom/agent.go" >&2; exit 1; }
if rev=$(git log -1 --format='%cd.%h' --date=format:%Y%m%d 2>/dev/null); then
	version="$base+git$rev"
else
	version="$base"
fi
arch=$(dpkg --print-architecture 2>/dev/null || go env GOARCH)
# gzip, which every dpkg reads; DPKG_DEB_COMPRESSOR_TYPE chooses another
# (the package test packs with none: it only reads the packages back).
export DPKG_DEB_COMPRESSOR_TYPE=${DPKG_DEB_COMPRESSOR_TYPE:-gzip}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "${PACKAGE_BIN:-}" ]; then
	# Binaries scripts/build.sh made already (the package test's).
	cp -a "$PACKAGE_BIN" "$work/bin"
else
	# Without the symbol tables: a third smaller, and stack traces keep
	# their file and line (Go's pclntab stays).
	./scripts/build.sh "$work/bin" -trimpath -ldflags=-s\ -w >/dev/null
fi

daemons=(pbs_server pbs_sched pbs_mom pbs_shepherd)
admin=(pbs_setup pbs_login)
not_shipped=(pbsbench swfsynth acctsynth swf_sched site_ranking) # tools and examples

# pkg NAME DESCRIPTION DEPENDS: a package tree in $work/NAME.
pkg() {
	local name=$1 desc=$2 depends=$3 dir=$work/$1
	mkdir -p "$dir/DEBIAN"
	{
		echo "Package: $name"
		echo "Version: $version"
		echo "Architecture: $arch"
		echo "Maintainer: gopbs <gopbs@localhost>"
		echo "Section: admin"
		echo "Priority: optional"
		[ -n "$depends" ] && echo "Depends: $depends"
		echo "Description: $desc"
		echo " A PBS-style batch system (pbs_server, pbs_sched, pbs_mom and the"
		echo " qsub, qstat, qmgr... commands). See /opt/gopbs/share/doc/README.md."
	} >"$dir/DEBIAN/control"
}

# units NAME UNIT...: the package's systemd units and the maintainer
# scripts that reload systemd, restart what ran on upgrade, stop on removal.
units() {
	local name=$1 dir=$work/$1
	shift
	mkdir -p "$dir/lib/systemd/system"
	for u in "$@"; do
		install -m 0644 "packaging/systemd/$u" "$dir/lib/systemd/system/$u"
	done
	cat >"$dir/DEBIAN/postinst" <<EOF
#!/bin/sh
# Never touches PBS_HOME: the daemons read what is there (and refuse a
# store made by a newer version).
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
	if [ "\$1" = configure ] && [ -n "\$2" ]; then
		systemctl try-restart $* || true
	fi
fi
EOF
	cat >"$dir/DEBIAN/prerm" <<EOF
#!/bin/sh
set -e
if [ -d /run/systemd/system ] && [ "\$1" = remove ]; then
	systemctl stop $* || true
fi
EOF
	chmod 0755 "$dir/DEBIAN/postinst" "$dir/DEBIAN/prerm"
}

# The client: every command.
pkg gopbs-client "gopbs batch system: the commands" ""
mkdir -p "$work/gopbs-client/opt/gopbs/bin" "$work/gopbs-client/opt/gopbs/sbin" \
	"$work/gopbs-client/etc/profile.d" "$work/gopbs-client/opt/gopbs/share/doc"
for f in "$work"/bin/*; do
	n=$(basename "$f")
	case " ${daemons[*]} ${not_shipped[*]} " in *" $n "*) continue ;; esac
	case " ${admin[*]} " in
	*" $n "*) install -m 0755 "$f" "$work/gopbs-client/opt/gopbs/sbin/$n" ;;
	*) install -m 0755 "$f" "$work/gopbs-client/opt/gopbs/bin/$n" ;;
	esac
done
install -m 0644 README.md ARCHITECTURE.md SECURITY.md "$work/gopbs-client/opt/gopbs/share/doc/"
cat >"$work/gopbs-client/etc/profile.d/gopbs.sh" <<'EOF'
# gopbs's commands (package gopbs-client).
case ":$PATH:" in *:/opt/gopbs/bin:*) ;; *) PATH=$PATH:/opt/gopbs/bin ;; esac
EOF
units gopbs-client pbs_login.service

# The server host: the server and the scheduler.
pkg gopbs-server "gopbs batch system: pbs_server and pbs_sched" "gopbs-client (= $version), python3"
mkdir -p "$work/gopbs-server/opt/gopbs/sbin"
install -m 0755 "$work/bin/pbs_server" "$work/bin/pbs_sched" "$work/gopbs-server/opt/gopbs/sbin/"
units gopbs-server pbs_server.service pbs_sched.service

# An execution host: the mom and its shepherd.
pkg gopbs-execution "gopbs batch system: pbs_mom" "gopbs-client (= $version), python3"
mkdir -p "$work/gopbs-execution/opt/gopbs/sbin"
install -m 0755 "$work/bin/pbs_mom" "$work/bin/pbs_shepherd" "$work/gopbs-execution/opt/gopbs/sbin/"
units gopbs-execution pbs_mom.service

for p in gopbs-client gopbs-server gopbs-execution; do
	dpkg-deb --root-owner-group --build "$work/$p" "$out/${p}_${version}_${arch}.deb" >/dev/null
	echo "$out/${p}_${version}_${arch}.deb"
done
