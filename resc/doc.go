// Package resc is the syntax of PBS resource values: sizes ("300mb",
// "27GB", "4w"), durations ("[[H:]M:]S", unpadded fields, hours over 24),
// integers, booleans, and the chunk specs "select=2:ncpus=1:mem=1gb+1:ngpus=1"
// and Torque's "nodes=2:ppn=4". It knows the type of every built-in
// resource, canonicalises values the way the server stores them, compares
// them for queue limits, and derives a job's totals (ncpus, mem, nodect)
// from its select.
//
// The package is pure: no I/O, no clocks, no globals that change.
package resc
