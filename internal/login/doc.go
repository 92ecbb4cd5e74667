// Package login is pbs_login, the agent that lets the commands of a login
// host (one that runs neither pbs_server nor pbs_mom) reach the server:
// it listens on PBS_HOME/pbs_login.sock, learns each caller's uid from the
// kernel (SO_PEERCRED), and relays the caller's requests to the server
// over TCP, each stamped with that uid (internal/relay), on a connection
// authenticated with this host's login key.
//
// Trust: the login key (proto.LoginKey) is derived from the cluster key
// and this host's name, and gives the role RoleLogin only: the server
// takes from it nothing but requests on behalf of users, and places those
// users at this host (whatever the stamp says). A user of the host can
// claim no other uid (the kernel names the caller), and root of the host,
// who holds the key, can act as any user of this host but never as a
// daemon, another host, or the server's own root.
//
// Budgets: the agent admits at most localBudget connections at once, so
// that one host stays inside the server's per-peer budget, and each uid
// at most its share, so that one user's connections cannot lock out the
// others.
//
// Who calls: internal/logind (the process) calls New and Run.
package login
