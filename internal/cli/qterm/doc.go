// Package qterm is qterm's logic, with a testable run; cmd/qterm is its
// main and documents the command.
package qterm
