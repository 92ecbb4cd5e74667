// Command pbs_setup prepares a host for its role in a cluster.
//
// Usage: pbs_setup server|execution [--server HOST] [--peers HOST:PORT,...]
// [--home DIR] [--exec DIR] [--key FILE] [--node NAME] [--conf FILE]
//
//   - It writes pbs.conf (--conf, else $PBS_CONF_FILE, else /etc/pbs.conf):
//     PBS_HOME (--home, default /var/spool/pbs), PBS_EXEC (--exec, default
//     the directory above pbs_setup's bin or sbin: /opt/gopbs as packaged), PBS_SERVER (--server; on a server,
//     this host by default), PBS_SERVER_PEERS (--peers) and, on an
//     execution host, PBS_MOM_NODE_NAME (--node, default this host); every
//     other line of the file is kept.
//   - It makes PBS_HOME's directories with their modes (auth 0700,
//     server_priv and sched_priv 0750, mom_priv 0751, the logs 0755).
//   - server: the cluster key in PBS_HOME/auth/cluster.key is made the
//     first time (or taken from --key, for a second server of a group),
//     and pbs_setup says how to copy it to the other hosts.
//   - execution: the cluster key must be given (--key FILE, a copy of the
//     server's) unless it is in place; pbs_setup prints the qmgr line that
//     creates the node.
//   - Run again with the same options, it ends with the same files; a
//     different key where one is installed is refused, never overwritten.
//   - client and login are refused: a host that runs neither pbs_server
//     nor pbs_mom has no way to reach the server yet.
//   - A wrong or missing option stops it with a message naming it (exit
//     2); a failure to set the host up exits 1.
package main
