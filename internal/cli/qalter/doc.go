// Package qalter is qalter's logic, with a testable run; cmd/qalter is its
// main and documents the command.
package qalter
