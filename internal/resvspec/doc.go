// Package resvspec reads a reservation request (pbs_rsub, pbs_ralter):
// its attributes into the reservation and its times and resources, the
// times settled against now, a standing reservation's occurrences from its
// rule in its time zone, its select and place, and the amounts its
// exec_vnode holds on each node. It is pure: the server passes now and the
// resource table in.
package resvspec
