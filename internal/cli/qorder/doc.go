// Package qorder is qorder's logic, with a testable run; cmd/qorder is its
// main and documents the command.
package qorder
