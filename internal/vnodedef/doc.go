// Package vnodedef reads the version-2 configuration files of a mom
// (PBS_HOME/mom_priv/config.d, managed with pbs_mom -s): the vnodes a host
// is split into and their attributes, as OpenPBS defines them.
//
// A file starts with the line "$configversion 2"; every other line that is
// not blank or a "#" comment is "VNODE: ATTRIBUTE = VALUE". The attributes
// a file may set are resources_available.RES, sharing and resv_enable.
// Files are applied in order, a later line overriding an earlier one for
// the same vnode and attribute (Merge).
//
// The package is pure: it reads bytes it is given and touches no file.
// Who calls: pbs_mom, at start, at SIGHUP and for pbs_mom -s insert (a file
// that does not parse is refused there, naming the line).
package vnodedef
