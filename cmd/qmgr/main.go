package main

import "github.com/gopbs/gopbs/internal/cli/qmgr"

func main() { qmgr.Main() }
