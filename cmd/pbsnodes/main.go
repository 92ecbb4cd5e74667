package main

import "github.com/gopbs/gopbs/internal/cli/pbsnodes"

func main() { pbsnodes.Main() }
