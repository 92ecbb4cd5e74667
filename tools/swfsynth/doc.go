// Command swfsynth writes a synthetic workload in the Standard Workload
// Format: a deep queue on one machine, to measure pbs_simulate where the
// reference traces do not reach (the 232,000-job, 1,152-processor trace
// of issue 30 item 10 is held out). The same flags give the same file.
//
//	go run ./tools/swfsynth -jobs 232000 -procs 1152 > /tmp/deep/deep.swf
//	PBSSIM_TRACES=/tmp/deep go test -run '^$' -bench 'BenchmarkReplay$' -benchtime 3x ./sched/sim/
//
// Jobs ask 1 to 512 processors (mostly small), run a log-normal time
// (median about 11 minutes, at most two days) and request 1 to 3 times
// that plus a minute, rounded up as users round (5 minutes, half hours); arrivals are Poisson with a load swinging between
// 0.65 and 1.25 over five days, so that the queue grows deep and drains.
package main
