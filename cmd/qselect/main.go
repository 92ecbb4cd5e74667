package main

import "github.com/gopbs/gopbs/internal/cli/qselect"

func main() { qselect.Main() }
