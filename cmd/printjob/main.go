package main

import "github.com/gopbs/gopbs/internal/cli/printjob"

func main() { printjob.Main() }
