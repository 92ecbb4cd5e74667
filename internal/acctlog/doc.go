// Package acctlog reads a server's accounting directory: its day files
// (YYYYMMDD, plain or gzip-compressed), each whole day's summary kept in
// .qacct beside them (the ended jobs' sums by key, the range of job
// numbers its records name, its damaged lines; read again when the log
// changes), and one job's records (FindJob, through those ranges).
//
// Who calls: qacct for its reports and -j; pbs_server for qstat -x of a
// job whose history has left its memory (internal/server/history.go).
// Nothing here is shared between calls: each reads the files afresh.
package acctlog
