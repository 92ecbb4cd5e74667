// Package jobjson is the job file filters read and rewrite (DESIGN §7):
// one job as "qstat -f -F json <id>" prints it, whole document and all
// ({"timestamp", "pbs_version", "pbs_server", "Jobs": {"<id>": {...}}}),
// so an admin can try a filter on qstat's own output. Encode writes it
// (through internal/display, the same code qstat uses); Decode reads a
// file a filter may have rewritten back into attributes, and Diff says
// what the filter changed.
//
// Decoding is strict, since the file comes from a program: one job only,
// attribute values that are strings, numbers or booleans, one level of
// nesting for resource lists and Variable_List, at most MaxSize bytes.
// Times read back from their ctime form (or plain Unix seconds) in the
// zone they were written in, so an untouched file decodes to exactly the
// attributes it was made from.
package jobjson
