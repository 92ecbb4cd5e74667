// Command pbs_server is the batch server: it owns jobs, queues and nodes,
// answers the commands on a Unix socket in PBS_HOME and the daemons on
// PBS_BATCH_SERVICE_PORT, and keeps its state in server_priv. With PBS_WEB
// set it also serves the web status page and JSON API (internal/web). It stays in
// the foreground and logs to stderr and PBS_HOME/server_logs.
package main

import "github.com/gopbs/gopbs/internal/serverd"

func main() { serverd.Main() }
