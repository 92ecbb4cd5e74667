// Package web is pbs_server's HTTP listener (pbs.conf PBS_WEB=host:port,
// off when unset): a read-only status page at / and a versioned JSON API
// under /api/v1/ for tools.
//
// Contract:
//
//   - Read-only. Only GET and HEAD are answered (405 otherwise); nothing
//     here changes the server's state.
//   - The API serves the documents the commands print, so a tool can swap
//     a command for a GET: /api/v1/jobs is "qstat -f -F json" (with
//     ?history=true, "qstat -f -x -F json"), /api/v1/jobs/<id> the same
//     for one job (finished jobs included), /api/v1/queues
//     "qstat -Q -f -F json", /api/v1/server "qstat -B -f -F json" and
//     /api/v1/nodes "pbsnodes -a -F json", in the pbspro personality, with
//     times in the server host's zone. /api/v1/schema is the schema of
//     those documents (api-v1.schema.json, docs/api-v1.md): fields are
//     added in v1, never removed or given another meaning; that is a /v2.
//   - The page (assets/, embedded in the binary) is HTML, CSS and
//     JavaScript served from here; it loads nothing from elsewhere, and its
//     Content-Security-Policy forbids it to. It reads the API and the
//     page's own endpoints under /ui/ (whoami, plan, fairshare, events),
//     which are not part of the versioned API.
//   - Access (access.go): a request is anonymous unless it carries a token
//     (Authorization: Bearer, issued by pbs_webtoken) or comes from the
//     trusted reverse proxy with the user in its header
//     (PBS_WEB_PROXY_HEADER). The proxy is known by what no other user can
//     forge (proxy.go): an address of another host (PBS_WEB_PROXY_ADDR;
//     Start refuses loopback and this host's addresses, which any local
//     user can connect from), or, on this host, its uid on the socket
//     PBS_HOME/pbs_web.sock (PBS_WEB_PROXY_UID, as the kernel reports
//     the peer). Anonymous requests are answered only
//     to this host's loopback addresses and the proxy, and see what any
//     user may see when query_other_jobs is true (job ids, names, owners,
//     queues, states, nodes, times and sizes; no environment, paths,
//     scripts or comments), and nothing when it is false. A named user
//     sees what qstat shows them; managers and operators everything. The
//     static page itself holds no data and is served to anyone who may
//     connect.
//   - Names (host.go): only a request whose Host names this listener is
//     answered (its address, this host's names and addresses, the
//     server's name, PBS_WEB_HOSTS); 421 otherwise, so a page elsewhere
//     cannot read the anonymous view through DNS rebinding.
//   - Budgets: connections go through a connlimit.Limiter of their own
//     (class "web"), separate from the batch ports'; a refused connection
//     is answered 503. This host is one peer whatever address a local
//     user connects from, the proxy one bounded by the class alone, and a
//     viewer holds at most streamsPerViewer event streams (429 beyond). Headers are bounded (431), slow or silent clients
//     time out, at most renderSlots listings are built at once (503 with
//     Retry-After beyond) and answers waiting for slow readers hold at
//     most maxUnsent bytes, so a flood here costs the batch ports a
//     bounded share of the server's read lock, cpu and memory.
//
// Who calls: pbs_server's main starts a Server with Start when PBS_WEB is
// set and closes it before the batch server. The server's state comes
// through Source, which internal/server implements.
package web
