// Package store keeps the server's state in a bbolt file in server_priv.
//
// schema.go names every bucket and the storage version. Open refuses a
// file it cannot read, of another version or missing a bucket, with an
// error naming what is wrong: a damaged store is never silently replaced
// by a fresh one. A new store is built in a temporary file and renamed into
// place, so a crash during creation leaves no half-made store behind.
//
// Writes go through a Committer, which runs the callers' mutation
// functions one after another under the server's lock and commits all of
// them in one transaction (group commit): concurrent submissions share one
// fsync, and no caller is answered before its transaction is durable.
package store
