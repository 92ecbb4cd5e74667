package main

import "github.com/gopbs/gopbs/internal/cli/pbssetup"

func main() { pbssetup.Main() }
