// Package qstat is qstat's logic (options, requests, output), with a testable
// run; cmd/qstat is its main and documents the command.
package qstat
