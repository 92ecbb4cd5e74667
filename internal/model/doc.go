// Package model is the server's object model: the server, queues, nodes and
// jobs, their attributes (names from proto, types, defaults, who may set
// them), job states and transitions, and holds.
//
// The server, queues and nodes are generic attribute sets checked against a
// definition table, because they are few and qmgr sets arbitrary attributes
// on them. Jobs are typed structs, because there are hundreds of thousands
// of them and the server reads their fields on every request; a table maps
// each job attribute name to its field for status, submission and qalter.
//
// The package is pure: it never locks, logs or does I/O. The server owns
// every object and serialises access to it.
package model
