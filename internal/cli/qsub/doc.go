// Package qsub is qsub's logic (options, requests, output), with a testable
// run; cmd/qsub is its main and documents the command.
package qsub
