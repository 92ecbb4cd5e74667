// Package integration holds end-to-end tests: they build the real
// binaries, start the daemons as separate processes in a temporary
// PBS_HOME with free ports (internal/testcluster), drive them with the real
// commands and check what a user would see.
package integration
