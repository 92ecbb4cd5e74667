// Package pbsnodes is pbsnodes's logic (options, requests, output), with a testable
// run; cmd/pbsnodes is its main and documents the command.
package pbsnodes
