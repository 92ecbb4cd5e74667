// Command pbs_login is the login host's agent: the commands of a host
// that runs neither pbs_server nor pbs_mom reach the server through its
// socket (PBS_HOME/pbs_login.sock), which vouches for each caller's uid as
// the kernel reports it, with this host's login key
// (PBS_HOME/auth/login.key, made by pbs_setup login-key on a server host).
// It stays in the foreground and logs to stderr and PBS_HOME/login_logs.
//
// Usage: pbs_login [-d PBS_HOME] [-log-level LEVEL] [-version]
package main

import "github.com/gopbs/gopbs/internal/logind"

func main() { logind.Main() }
