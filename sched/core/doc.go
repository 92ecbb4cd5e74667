// Package core is the pure scheduling core: the typed world a policy sees
// (jobs, nodes, queues, the server, parsed once at the edge), the time
// axis of that world (Calendar: when running jobs end, what is reserved),
// the Status every check returns, and the decisions a policy makes.
//
// It does no I/O: no sockets, files, clocks or process-wide settings. Time
// is what the caller says it is (World.Now), so the same code decides in
// pbs_sched, in the trace simulator and in table tests; purity_test.go
// fails the build when this package, or a package it or a policy builds
// on, imports anything that could reach outside.
//
// Who calls: a driver (the live runner in package sched, the simulator)
// builds a World once per cycle, and a policy reads it and returns a Plan.
// Nothing here is safe for concurrent mutation; a World is read-only once
// built, a Calendar belongs to one cycle.
package core
