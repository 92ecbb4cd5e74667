package main

import "github.com/gopbs/gopbs/internal/cli/qwait"

func main() { qwait.Main() }
