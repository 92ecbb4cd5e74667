package main

import "github.com/gopbs/gopbs/internal/cli/qstat"

func main() { qstat.Main() }
