// Package qselect is qselect's logic (options, requests, output), with a testable
// run; cmd/qselect is its main and documents the command.
package qselect
