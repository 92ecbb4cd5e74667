// Package qwait is qwait's logic (options, requests, output), with a testable
// run; cmd/qwait is its main and documents the command.
package qwait
