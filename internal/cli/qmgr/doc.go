// Package qmgr is qmgr's logic (options, requests, output), with a testable
// run; cmd/qmgr is its main and documents the command.
package qmgr
