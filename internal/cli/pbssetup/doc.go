// Package pbssetup is pbs_setup's logic, with a testable run; cmd/pbs_setup
// is its main and documents the command.
package pbssetup
