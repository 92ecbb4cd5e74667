// Package fault names the places where a test build of the daemons fails
// on purpose, so that tests can crash a daemon at the worst moments and
// then check that nothing acknowledged was lost and no job ran twice
// (issue 7; integration/fault_test.go).
//
// A point is compiled in everywhere but does something only in binaries
// built with -tags faultpoints (testcluster.BuildFaults): in the normal
// build Hit is an empty function the compiler removes. A fault build reads
// GOPBS_FAULTS at start, a comma list of point=action[@n]: on the n-th time
// (default the first) the point is reached, the action happens:
//
//	crash   the process kills itself with SIGKILL (kill -9, a power cut
//	        for everything not yet on disk)
//	exit    the process exits with status 3 at once (no clean-up)
//	error   Hit returns an error, which the caller treats as a failure of
//	        the operation at that point (a write error, a lost message)
//	stop    the process stops itself with SIGSTOP (a hang)
//
// A fault build's Now is also the host's clock advanced by what a test
// wrote in the file GOPBS_FAULT_CLOCK names (clock_on.go): pbs_server and
// pbs_sched take their time from it, so a test reaches a reservation's next
// occurrence without waiting for it (testcluster's AdvanceClock). Outside
// fault builds Now is time.Now.
//
// Every point's name is defined once, in names.go.
package fault
