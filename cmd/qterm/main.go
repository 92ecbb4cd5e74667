package main

import "github.com/gopbs/gopbs/internal/cli/qterm"

func main() { qterm.Main() }
