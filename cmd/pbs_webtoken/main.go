// Command pbs_webtoken issues and revokes the per-user tokens of
// pbs_server's web status page and JSON API (PBS_WEB):
//
//	pbs_webtoken USER      issue a token for USER and print it, once
//	pbs_webtoken -d USER   revoke every token of USER
//	pbs_webtoken -l        list the users holding tokens
//
// Tokens are kept in PBS_HOME/server_priv/web_tokens (internal/webtoken:
// only their SHA-256, mode 0600, owned by the server's user), which the
// server reads again whenever it changes: no restart is needed. Only the
// owner of server_priv (the user pbs_server runs as, root) may run it.
// A client presents a token as "Authorization: Bearer <token>"; the web
// page asks for it once and keeps it in the browser's session storage.
package main

import "github.com/gopbs/gopbs/internal/cli/pbswebtoken"

func main() { pbswebtoken.Main() }
