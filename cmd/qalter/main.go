package main

import "github.com/gopbs/gopbs/internal/cli/qalter"

func main() { qalter.Main() }
