// Command qsub submits a batch job to pbs_server and prints its id.
//
// Contract (reference/client-contract.md §2): the script is the operand
// path or stdin and is read completely before anything is sent. On success
// stdout is exactly "<id>\n" (nothing with -z), stderr is empty and the
// exit status is 0. A rejected submission prints "qsub: <message>" on
// stderr and exits with the PBSE code modulo 256; a server that cannot be
// reached exits 162 (PBSE_SYSTEM), the code PBS Pro users such as ERT treat
// as transient. Usage errors print a usage line and exit 2. "qsub
// --version" prints the version line of the caller's personality.
//
// Parsing lives in internal/qsubopt; this package only wires it to the
// process and the server connection.
package main
