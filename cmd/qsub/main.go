package main

import "github.com/gopbs/gopbs/internal/cli/qsub"

func main() { qsub.Main() }
