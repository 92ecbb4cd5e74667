// Package server is pbs_server's core: it owns the server, queue, node and
// job objects, answers the commands' requests, admits new jobs
// (admission.go: submission filters, then queue attributes), and persists
// every change through the store before answering.
//
// Concurrency: one goroutine per connection reads a request, handles it and
// writes the reply. Reads of the state take mu for reading. Every durable
// change runs as a function inside the store's Committer, which holds mu
// for writing across the function and the commit, so readers never see a
// change that is not yet durable, and changes made by one function are
// visible to the next function of the same group (queue limits stay exact
// under concurrent submissions).
package server
