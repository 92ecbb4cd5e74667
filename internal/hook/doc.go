// Package hook is OpenPBS's site hooks as stored values: a hook object
// (qmgr's "create hook NAME", "set hook NAME event = ...", "import hook
// NAME application/x-python default FILE"), its events, and the
// attributes' parsing and rendering, with OpenPBS's names and defaults.
//
// A Hook is typed (events a bit set, alarm and order numbers, fail_action
// a set of flags); its qmgr text is rendered from it (Attrs) and parsed
// into it once (Set), so the server, the store and the moms share one
// reading. The package is pure: no files, processes or clocks; running a
// hook is package hookrun's.
//
// Who calls: the server's qmgr handler (internal/server/management) to
// create, change, import and show hooks; the store to keep them; the
// server and the moms to find the hooks of an event, in order (Ordered).
package hook
