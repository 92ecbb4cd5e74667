// Package printjob is printjob's logic, with a testable run; cmd/printjob is its
// main and documents the command.
package printjob
